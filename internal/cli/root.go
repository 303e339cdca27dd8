// Package cli holds tollgate's commands. Each command only parses flags and
// wires the internal packages together; none holds policy logic.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	return 0
}

// NewRootCommand returns the tollgate command and its subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "tollgate",
		Short:         "A Kubernetes admission webhook: sidecar injection and policies",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newManifestsCommand())
	return root
}

// defaultCertDir is where self-signed material lives when no directory is given.
func defaultCertDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "tollgate", "certs")
}

// policyFlagHelp documents --config the same way for every command.
const policyFlagHelp = "policy file or directory of policy files (default: the embedded defaults)"
