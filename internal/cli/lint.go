package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

func newLintCommand() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "lint -c POLICIES",
		Short: "Load and check policies, reporting every problem",
		Long: "Prints every problem with file, document and field path, and warns about PolicyExceptions that\n" +
			"expire within a week or can never exempt anything. Exit status: 0 clean (warnings allowed), 1 problems found, 2 a path that cannot be\n" +
			"read or holds no policy.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usageError(errors.New("give the policies with -c"))
			}
			set, err := policy.LoadPath(config)
			if policy.Unreadable(err) {
				return usageError(err)
			}
			if err != nil {
				problems := flatten(err)
				for _, p := range problems {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\n%d problems\n", len(problems))
				return &exitError{code: exitDenied}
			}
			for _, n := range set.KyvernoNotes() {
				fmt.Fprintln(cmd.OutOrStdout(), "note:", n)
			}
			for _, w := range set.ExceptionWarnings(time.Now()) {
				fmt.Fprintln(cmd.OutOrStdout(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d policies, %d webhook groups: no problems\n", len(set.Policies), len(set.Groups))
			return nil
		},
	}
	cmd.Flags().StringVarP(&config, "config", "c", "", "policy file or directory")
	return cmd
}

// flatten lists the errors joined in err, one per problem.
func flatten(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
