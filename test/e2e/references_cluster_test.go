//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/policyreport"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

func uniqueIngressHost(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "policies", "references", "unique-ingress-host.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func ingressOf(ns, name, host string) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host}}}}
}

// TestReferencesNotListable serves unique-ingress-host as a user that may
// not list Ingresses: tollgate is ready (the kind does not hold
// readiness), and an Ingress is denied by failurePolicy: Fail with an error
// naming what tollgate needs, never admitted as if no other Ingress
// existed. Once the user is granted Ingresses, tollgate lists them and
// decides.
func TestReferencesNotListable(t *testing.T) {
	c := ctx(t)
	ns := namespace(t, "refs-unlisted", nil)
	if _, err := cluster.client.NetworkingV1().Ingresses(ns).Create(c, ingressOf(ns, "taken", "taken.refs.example"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const user = "refs-unlisted-tollgate"
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
	kubeconfig := userWith(t, user, rules)
	serveAndRegister(t, "refs-unlisted", nil, uniqueIngressHost(t), "--kubeconfig", kubeconfig, "--background-audit=false")
	create := func(name, host string) error {
		_, err := cluster.client.NetworkingV1().Ingresses(ns).Create(c, ingressOf(ns, name, host), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	framework.WaitFor(t, 30*time.Second, "an Ingress denied, naming what tollgate may not list", func() bool {
		err := create("fresh", "fresh.refs.example")
		return err != nil && strings.Contains(err.Error(), "tollgate may not list ingresses.networking.k8s.io")
	})
	t.Logf("without the grant: %v", create("fresh", "fresh.refs.example"))

	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}})
	role, err := cluster.client.RbacV1().ClusterRoles().Get(c, user, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = rules
	if _, err := cluster.client.RbacV1().ClusterRoles().Update(c, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	took := framework.WaitFor(t, 90*time.Second, "a unique host admitted once Ingresses may be listed", func() bool {
		return create("fresh", "fresh.refs.example") == nil
	})
	t.Logf("granted: Ingresses listed and a unique host admitted %s later", took.Round(time.Millisecond))
	if err := create("copy", "taken.refs.example"); err == nil || !strings.Contains(err.Error(), "violates policy unique-ingress-host") || !strings.Contains(err.Error(), ns+"/taken") {
		t.Errorf("a duplicate host once Ingresses are listed: %v, want denied naming %s/taken", err, ns)
	}
}

// TestReferencesRaceReported creates two Ingresses of one host at the same
// instant through tollgate's webhook until both are admitted (each was
// decided before the other reached tollgate's cache, the race the docs
// describe), and waits for the background audit to report both as
// duplicates.
func TestReferencesRaceReported(t *testing.T) {
	if err := framework.InstallReportCRDs(cluster.restConfig, string(policyreport.OpenReports)); err != nil {
		t.Fatal(err)
	}
	a := namespace(t, "refs-race-a", nil)
	b := namespace(t, "refs-race-b", nil)
	if _, err := cluster.client.NetworkingV1().Ingresses(a).Create(context.Background(), ingressOf(a, "first", "first.refs.example"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startTollgateWith(t, "refs-race", nil, uniqueIngressHost(t))
	framework.WaitFor(t, 30*time.Second, "unique-ingress-host in effect", func() bool {
		_, err := cluster.client.NetworkingV1().Ingresses(b).Create(context.Background(), ingressOf(b, "second", "first.refs.example"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "unique-ingress-host")
	})
	var raced string
	for attempt := 1; attempt <= 20 && raced == ""; attempt++ {
		host := fmt.Sprintf("race-%d.refs.example", attempt)
		var wg sync.WaitGroup
		var errs [2]error
		start := make(chan struct{})
		for i, ns := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = cluster.client.NetworkingV1().Ingresses(ns).Create(context.Background(), ingressOf(ns, "racer", host), metav1.CreateOptions{})
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] == nil && errs[1] == nil {
			raced = host
			t.Logf("attempt %d: both Ingresses of %s admitted", attempt, host)
			break
		}
		for i, ns := range []string{a, b} {
			if errs[i] == nil {
				_ = cluster.client.NetworkingV1().Ingresses(ns).Delete(context.Background(), "racer", metav1.DeleteOptions{})
			}
		}
		framework.WaitFor(t, 30*time.Second, "the racers gone", func() bool {
			for _, ns := range []string{a, b} {
				if _, err := cluster.client.NetworkingV1().Ingresses(ns).Get(context.Background(), "racer", metav1.GetOptions{}); err == nil {
					return false
				}
			}
			return true
		})
	}
	if raced == "" {
		t.Fatal("no two simultaneous Ingresses of one host were both admitted in 20 attempts")
	}
	dyn, err := dynamic.NewForConfig(cluster.restConfig)
	if err != nil {
		t.Fatal(err)
	}
	took := framework.WaitFor(t, 60*time.Second, "both racers reported as duplicates", func() bool {
		return ingressResult(t, dyn, a, "racer") == "fail" && ingressResult(t, dyn, b, "racer") == "fail"
	})
	t.Logf("both racers reported failing unique-ingress-host %s after they were created", took.Round(time.Millisecond))
}

// ingressResult is unique-ingress-host's result for an Ingress in its
// namespace's openreports Report, "" when there is none.
func ingressResult(t *testing.T, dyn dynamic.Interface, ns, name string) string {
	t.Helper()
	reports := schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	list, err := dyn.Resource(reports).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for _, item := range list.Items {
		js, err := json.Marshal(item.Object["results"])
		if err != nil {
			t.Fatal(err)
		}
		var results []struct {
			Policy, Result string
			Resources      []struct{ Kind, Name string }
		}
		if err := json.Unmarshal(js, &results); err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Policy == "unique-ingress-host" && len(r.Resources) == 1 && r.Resources[0].Kind == "Ingress" && r.Resources[0].Name == name {
				return r.Result
			}
		}
	}
	return ""
}
