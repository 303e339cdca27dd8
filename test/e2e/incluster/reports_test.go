//go:build e2e

package incluster

// Reading the background audit's reports as a viewer reads them, and the
// helpers TestBackgroundAudit uses to change objects and policies. No
// tests here: the tests of this package run in file order.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/policyreport"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// reportResult is one result of a report, as a viewer reads it.
type reportResult struct {
	Policy    string `json:"policy"`
	Result    string `json:"result"`
	Message   string `json:"message"`
	Resources []struct {
		Kind, Name, UID string
	} `json:"resources"`
	Properties map[string]string `json:"properties"`
}

// namespaceResults reads every tollgate report of a namespace: for each
// ConfigMap, the results of policy, in the order found (more than one is
// a duplicate).
func namespaceResults(ctx context.Context, dyn dynamic.Interface, namespace, policy string) (map[string][]reportResult, error) {
	list, err := dyn.Resource(reportsResource).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: policyreport.ManagedByLabel + "=" + policyreport.ManagedBy})
	if err != nil {
		return nil, err
	}
	out := map[string][]reportResult{}
	for _, item := range list.Items {
		js, err := json.Marshal(item.Object["results"])
		if err != nil {
			return nil, err
		}
		var results []reportResult
		if err := json.Unmarshal(js, &results); err != nil {
			return nil, err
		}
		for _, r := range results {
			if r.Policy == policy && len(r.Resources) == 1 && r.Resources[0].Kind == "ConfigMap" {
				out[r.Resources[0].Name] = append(out[r.Resources[0].Name], r)
			}
		}
	}
	return out, nil
}

// outcomes are the results per ConfigMap, joined: "fail", "fail,fail" for a duplicate.
func outcomes(byName map[string][]reportResult) map[string]string {
	out := map[string]string{}
	for name, rs := range byName {
		var s []string
		for _, r := range rs {
			s = append(s, r.Result)
		}
		out[name] = strings.Join(s, ",")
	}
	return out
}

func configMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
}

func writePolicyFile(t *testing.T, name, doc string) {
	t.Helper()
	path := filepath.Join(env.policies, name)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// reportClient reads reports as often as the tests poll, unthrottled.
func reportClient(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.controlPlane.Config)
	cfg.QPS, cfg.Burst = 200, 400
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

func leaderReplica(t *testing.T) *replica {
	t.Helper()
	lease, err := env.client.CoordinationV1().Leases(ns).Get(context.Background(), "tollgate-leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range env.replicas {
		if strings.HasPrefix(framework.Deref(lease.Spec.HolderIdentity), fmt.Sprintf("replica-%d_", r.id)) && alive(r) {
			return r
		}
	}
	t.Fatalf("lease held by %q, no live replica of ours", framework.Deref(lease.Spec.HolderIdentity))
	return nil
}
