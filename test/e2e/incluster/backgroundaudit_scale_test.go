//go:build e2e

package incluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/policyreport"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// scalePolicies are 10 validating policies over ConfigMaps (4) and Pods
// (6), each limited to the scale test's namespaces. With the seed's
// require-environment, a ConfigMap has 4 results and a Pod 7.
const scalePolicies = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-cm-owner}
spec:
  match: {resources: [configmaps], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate: {labels: [{key: owner}]}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-cm-small}
spec:
  match: {resources: [configmaps], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "!has(object.data) || object.data.size() <= 2", message: "at most 2 keys"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-cm-name}
spec:
  match: {resources: [configmaps], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "object.metadata.name.startsWith('cm-')", message: "name ConfigMaps cm-*"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-cm-no-password}
spec:
  match: {resources: [configmaps], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "!has(object.data) || !object.data.exists(k, k.contains('password'))", message: "no passwords in ConfigMaps"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-team}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate: {labels: [{key: team}]}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-app}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate: {labels: [{key: app}]}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-no-latest}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "object.spec.containers.all(c, !c.image.endsWith(':latest') && c.image.contains(':'))", message: "pin your images"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-limits}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "object.spec.containers.all(c, has(c.resources.limits) && 'memory' in c.resources.limits)", message: "set a memory limit"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-non-root}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot", message: "run as non-root"}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: scale-pod-no-host-network}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE], namespaceSelector: {matchLabels: {bgaudit-scale: e2e}}}
  validate:
    expressions:
    - {expression: "!has(object.spec.hostNetwork) || !object.spec.hostNetwork", message: "no host network"}
`

// TestBackgroundAuditScale measures the background audit over 5,000
// existing objects (50 ConfigMaps and 50 Pods in each of 50 namespaces)
// once 10 policies load: time to the first complete set of reports,
// report writes, the largest report, the leader's memory. Not part of
// make test: TOLLGATE_E2E_SCALE=1 runs it (docs/cli.md has the command).
func TestBackgroundAuditScale(t *testing.T) {
	if os.Getenv("TOLLGATE_E2E_SCALE") == "" {
		t.Skip("TOLLGATE_E2E_SCALE=1 runs it")
	}
	ctx := context.Background()
	dyn := reportClient(t)
	const spaces, perKind = 50, 50
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, spaces)
	sem := make(chan struct{}, 8)
	for i := range spaces {
		space := fmt.Sprintf("e2e-scale-%02d", i)
		if err := framework.EnsureNamespace(ctx, env.client, space, map[string]string{"bgaudit-scale": "e2e"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.client.CoreV1().Namespaces().Delete(ctx, space, metav1.DeleteOptions{}) })
		for j := range perKind {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				cm := configMap(fmt.Sprintf("cm-%02d", j), nil)
				if j%2 == 0 {
					cm.Labels = map[string]string{"owner": "team-a"}
				}
				if j%5 == 0 {
					cm.Data["db-password"] = "x"
				}
				if _, err := env.client.CoreV1().ConfigMaps(space).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
				labels := map[string]string{"environment": "dev", "app": "web"}
				if j%3 == 0 {
					labels["team"] = "a"
				}
				p := framework.Pod(fmt.Sprintf("pod-%02d", j), labels, nil)
				if j%4 == 0 {
					p.Spec.Containers[0].Image = "nginx:latest"
				}
				if _, err := env.client.CoreV1().Pods(space).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d objects created in %d namespaces in %s", 2*spaces*perKind, spaces, time.Since(start).Round(time.Second))

	leader := leaderReplica(t)
	writesBefore := auditWrites(t, leader)
	writePolicyFile(t, "bgaudit-scale.yaml", scalePolicies)

	const wantResults = spaces * perKind * (4 + 7)
	var largest, reports, results int
	// Listing every report (megabytes) loads the apiserver the audit
	// writes to: wait for the leader's writes first, then read them.
	took := framework.WaitFor(t, 5*time.Minute, "every object of the 50 namespaces reported", func() bool {
		if auditWrites(t, leader)-writesBefore < spaces {
			return false
		}
		largest, reports, results = scaleReports(t, ctx, dyn)
		if results != wantResults {
			time.Sleep(time.Second)
		}
		return results == wantResults
	})
	writes := auditWrites(t, leader) - writesBefore
	rss, hwm := framework.Memory(t, leader.cmd.Process.Pid)
	t.Logf("10 policies over %d objects in %d namespaces: first complete set of reports %s after the policy file was written (reload every 250ms; evaluating every object: %s); %d reports, %d results; %d report writes; largest report %d bytes; leader RSS %d MiB (peak %d MiB)",
		2*spaces*perKind, spaces, took.Round(10*time.Millisecond), scanTook(t, leader), reports, results, writes, largest, rss>>20, hwm>>20)
	time.Sleep(10 * time.Second)
	if idle := auditWrites(t, leader) - writesBefore - writes; idle != 0 {
		t.Errorf("%d report writes in 10s with nothing changing", idle)
	}
}

// scaleReports lists the scale test's reports: the largest's size in
// bytes (its JSON, as stored), how many, and the results they hold.
func scaleReports(t *testing.T, ctx context.Context, dyn dynamic.Interface) (largest, reports, results int) {
	list, err := dyn.Resource(reportsResource).List(ctx, metav1.ListOptions{LabelSelector: policyreport.ManagedByLabel + "=" + policyreport.ManagedBy})
	if err != nil {
		t.Log(err)
		return 0, 0, 0
	}
	for _, item := range list.Items {
		if !strings.HasPrefix(item.GetNamespace(), "e2e-scale-") {
			continue
		}
		js, err := json.Marshal(item.Object)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(js))
		reports++
		rs, _ := item.Object["results"].([]any)
		results += len(rs)
	}
	return largest, reports, results
}

var writesLine = regexp.MustCompile(`(?m)^tollgate_background_audit_report_writes_total\{op="[a-z]+"\} (\d+)$`)

// auditWrites sums a replica's report writes.
func auditWrites(t *testing.T, r *replica) int {
	n := 0
	for _, m := range writesLine.FindAllStringSubmatch(metricsPage(t, r), -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// scanTook is how long the replica's last full evaluation took, from its log.
func scanTook(t *testing.T, r *replica) time.Duration {
	data, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	for _, line := range strings.Split(string(data), "\n") {
		var l struct {
			Msg  string `json:"msg"`
			Took int64  `json:"took"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "background audit: every object evaluated" {
			took = time.Duration(l.Took)
		}
	}
	return took
}
