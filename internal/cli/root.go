// Package cli holds tollgate's commands. Each command only parses flags and
// hands them to the internal packages; none holds policy logic. serve turns
// its flags into a replica.Config, and internal/replica runs the server.
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
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		code, show := exitCode(err)
		if show {
			fmt.Fprintln(stderr, "Error:", err)
		}
		return code
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(newServeCommand(), newManifestsCommand(), newCheckCommand(), newReviewCommand(), newLintCommand(), newTestCommand(), newAuditCommand(), newReplayCommand(), newUninstallCommand(), newVersionCommand())
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

const referencesFlagHelp = "file or directory of the objects policies' spec.references read, besides the manifests given (repeatable)"

const paramsFlagHelp = "file or directory of objects policies read: params of ValidatingAdmissionPolicies (ConfigMaps, custom resources, their CRDs) and RBAC objects for the authorizer variable (repeatable; objects in the policy and manifest files are read too)"
