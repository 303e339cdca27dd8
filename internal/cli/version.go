package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print which build of tollgate this is",
		Long: "Prints the release (set by make image from VERSION), the commit and whether the tree had\n" +
			"changes, the Go release and the platform. serve logs the same on its first line and exposes\n" +
			"it as the tollgate_build_info metric.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version.Get()
			switch output {
			case "text":
				fmt.Fprintln(cmd.OutOrStdout(), v)
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			default:
				return usageError(fmt.Errorf("--output %q: text or json", output))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
