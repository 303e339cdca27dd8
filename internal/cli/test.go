package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/suite"
)

func newTestCommand() *cobra.Command {
	var noFastPath bool
	var registry registryFlags
	cmd := &cobra.Command{
		Use:   "test DIR",
		Short: "Run the policy test suites (" + suite.FileName + ", Kyverno's " + suite.KyvernoFileName + " and gator verify's Suites, " + suite.GatorFileName + ") under DIR",
		Long:  "Exit status: 0 every expectation met, 1 some were not, 2 a suite that does not load.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			images, err := registry.verifier()
			if err != nil {
				return usageError(err)
			}
			files, err := suite.Find(args[0])
			if err != nil {
				return usageError(err)
			}
			out := cmd.OutOrStdout()
			total, failed := 0, 0
			for _, file := range files {
				s, err := suite.Load(file)
				if err != nil {
					return usageError(err)
				}
				s.NoCELFastPath, s.Images = noFastPath, images
				checks, err := s.Run(cmd.Context())
				if err != nil {
					return usageError(fmt.Errorf("%s: %w", file, err))
				}
				for _, n := range s.Notes() {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", file, n)
				}
				for _, c := range checks {
					total++
					status := "ok  "
					if c.Problem != "" {
						status = "FAIL"
						failed++
					}
					fmt.Fprintf(out, "%s %s: %s %s: %s\n", status, file, c.Policy, c.Resource, c.Got)
					if c.Problem != "" {
						fmt.Fprintf(out, "     %s (%s)\n", c.Problem, c.Message)
					}
				}
			}
			fmt.Fprintf(out, "\n%d suites, %d checks, %d failed\n", len(files), total, failed)
			if failed > 0 {
				return &exitError{code: exitDenied}
			}
			return nil
		},
	}
	addFastPathFlag(cmd.Flags(), &noFastPath)
	addRegistryFlags(cmd.Flags(), &registry)
	return cmd
}
