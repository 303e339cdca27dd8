//go:build e2e

package incluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/test/deploy"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// install applies tollgate's objects server-side as a user would: deploy/
// with kustomize, or with TOLLGATE_E2E_INSTALL=chart the Helm chart rendered
// by helm template (TOLLGATE_HELM, set by make) with its default values and
// the Namespace. It returns what kubectl said and the command, for the log.
func install() ([]byte, string, error) {
	if os.Getenv("TOLLGATE_E2E_INSTALL") != "chart" {
		what := "kubectl apply --server-side -k deploy/"
		out, err := exec.Command("kubectl", "--kubeconfig", env.adminKubeconfig, "apply", "--server-side", "-k", filepath.Join(framework.RepoRoot(), "deploy")).CombinedOutput()
		return out, what, err
	}
	what := "helm template deploy/helm/tollgate --set namespace.create=true | kubectl apply --server-side -f -"
	rendered, err := helmTemplate("--set", "namespace.create=true")
	if err != nil {
		return nil, what, err
	}
	out, err := applyServerSide(rendered)
	return out, what, err
}

// helmTemplate renders the chart as release tollgate in tollgate-system.
func helmTemplate(args ...string) ([]byte, error) {
	helm := os.Getenv("TOLLGATE_HELM")
	if helm == "" {
		return nil, fmt.Errorf("TOLLGATE_HELM is unset: make e2e builds the helm pinned in hack/helm and sets it")
	}
	args = append([]string{"template", "tollgate", filepath.Join(framework.RepoRoot(), "deploy", "helm", "tollgate"), "--namespace", ns}, args...)
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

func applyServerSide(manifests []byte, extra ...string) ([]byte, error) {
	args := append([]string{"--kubeconfig", env.adminKubeconfig, "apply", "--server-side", "-f", "-"}, extra...)
	cmd := exec.Command("kubectl", args...)
	cmd.Stdin = bytes.NewReader(manifests)
	return cmd.CombinedOutput()
}

// TestChartNonDefaultValuesDryRun renders the chart with values other than
// the defaults and has the apiserver accept every object in a server-side
// dry run. cert-manager's kinds are left out: its CRDs are not installed here.
func TestChartNonDefaultValuesDryRun(t *testing.T) {
	if os.Getenv("TOLLGATE_HELM") == "" {
		t.Skip("TOLLGATE_HELM is unset: make e2e builds helm and sets it")
	}
	for name, values := range deploy.NonDefaultValues(framework.RepoRoot()) {
		t.Run(name, func(t *testing.T) {
			rendered, err := helmTemplate(values...)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			dropped := 0
			for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(rendered), -1) {
				if strings.Contains(doc, "apiVersion: cert-manager.io/") {
					dropped++
					continue
				}
				if strings.TrimSpace(doc) != "" {
					kept = append(kept, doc)
				}
			}
			if strings.Contains(name, "cert-manager") && dropped != 4 {
				t.Errorf("%d cert-manager objects, want 4", dropped)
			}
			out, err := applyServerSide([]byte(strings.Join(kept, "\n---\n")), "--dry-run=server", "--force-conflicts")
			if err != nil {
				t.Fatalf("server-side dry run: %v\n%s", err, out)
			}
			t.Logf("%s", out)
			if !strings.Contains(string(out), "deployment.apps/tollgate serverside-applied (server dry run)") {
				t.Errorf("the Deployment was not applied:\n%s", out)
			}
		})
	}
}
