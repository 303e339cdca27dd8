package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/kubeclient"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

func newUninstallCommand() *cobra.Command {
	var kubeconfig string
	var name string
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Delete tollgate's webhook configurations",
		Long: "Deletes the Mutating- and ValidatingWebhookConfiguration tollgate keeps. Stop tollgate first\n" +
			"(kubectl delete -k deploy/): a running leader puts them back.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, err := kubeclient.New(kubeconfig)
			if errors.Is(err, kubeclient.ErrNoAccess) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			deleted, err := registration.Uninstall(cmd.Context(), client, name)
			for _, d := range deleted {
				fmt.Fprintln(cmd.OutOrStdout(), "deleted", d)
			}
			if err == nil && len(deleted) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no webhook configurations named", name)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	cmd.Flags().StringVar(&name, "name", "tollgate", "name of the webhook configurations")
	return cmd
}
