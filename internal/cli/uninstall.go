package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/kubeclient"
	"github.com/tollgate-dev/tollgate/internal/registration"
	"github.com/tollgate-dev/tollgate/internal/staticmanifests"
)

func newUninstallCommand() *cobra.Command {
	var kubeconfig string
	var name string
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Delete tollgate's webhook configurations",
		Long: "Deletes the Mutating- and ValidatingWebhookConfiguration tollgate keeps. Stop tollgate first\n" +
			"(kubectl delete -k deploy/): a running leader puts them back.\n\n" +
			"Static manifests (tollgate manifests --static) cannot be deleted through the API: when the\n" +
			"apiserver's metrics show it has loaded some, uninstall says which files to remove by hand.",
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
			if err != nil {
				return err
			}
			loaded, lerr := staticmanifests.Loaded(cmd.Context(), client.Discovery().RESTClient())
			fmt.Fprint(cmd.OutOrStdout(), staticNote(name, loaded, lerr))
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	cmd.Flags().StringVar(&name, "name", "tollgate", "name of the webhook configurations")
	return cmd
}

// staticNote says what to remove by hand when the apiserver has loaded
// static webhook manifests (loaded, by plugin), or that uninstall could
// not tell (err); nothing when it has loaded none.
func staticNote(name string, loaded map[string]string, err error) string {
	files := fmt.Sprintf("DIR/%s/%s.yaml and DIR/%s/%s.yaml (configurations %s), DIR being the directory given to tollgate manifests --static",
		staticmanifests.MutatingDir, name, staticmanifests.ValidatingDir, name, staticmanifests.Name(name))
	how := "Remove them by hand on every control-plane node before stopping tollgate (a webhook that fails closed and is no longer answered blocks what it matches); each apiserver drops them when it sees the change (within a minute), without a restart.\n"
	if err != nil {
		return fmt.Sprintf("could not tell whether the apiserver reads static webhook manifests (%v).\nIf tollgate was installed with tollgate manifests --static, no API request removes it: its files are %s.\n%s", err, files, how)
	}
	if len(loaded) == 0 {
		return ""
	}
	var plugins []string
	for _, p := range []string{staticmanifests.MutatingPlugin, staticmanifests.ValidatingPlugin} {
		if h, ok := loaded[p]; ok {
			plugins = append(plugins, p+" "+h)
		}
	}
	return fmt.Sprintf("the apiserver has loaded static webhook manifests (%s), which no API request removes.\nIf tollgate's are among them, its files are %s.\n%s", strings.Join(plugins, ", "), files, how)
}
