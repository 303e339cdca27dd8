// Command tollgate is a Kubernetes admission webhook: it injects sidecars and
// enforces policies. Everything it does lives under internal/; see internal/cli.
package main

import (
	"os"

	"github.com/tollgate-dev/tollgate/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
