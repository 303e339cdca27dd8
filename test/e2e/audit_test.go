//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollgate-dev/tollgate/internal/report"
)

// auditPolicies are what TestAudit audits with: a tollgate policy, a VAP on
// the object, a VAP on who asks (which an audit cannot know), an exception
// in force and an expired one.
const auditPolicies = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: audit-require-team}
spec:
  match:
    resources: [configmaps]
    namespaceSelector: {matchLabels: {audit-e2e: "yes"}}
  validate:
    labels: [{key: team}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: audit-no-passwords}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {audit-e2e: "yes"}}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || !('password' in object.data)"
    message: no passwords in ConfigMaps
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: audit-no-passwords}
spec: {policyName: audit-no-passwords, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: audit-only-admins}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {audit-e2e: "yes"}}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - expression: "request.userInfo.username == 'admin'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: audit-only-admins}
spec: {policyName: audit-only-admins, validationActions: [Deny]}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: legacy-config}
spec:
  policies: [audit-require-team]
  match: {namespaces: [audit-a], names: [legacy-*], kinds: [ConfigMap]}
  reason: owned by the retired platform team
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: expired-secrets}
spec:
  policies: [audit-no-passwords]
  match: {namespaces: [audit-b]}
  reason: migration to Secrets, done
  expiresAt: "2021-01-01T00:00:00Z"
`

// auditWant are TestAudit's results by object and policy: the message
// contains the given text.
var auditWant = map[string]struct {
	result  string
	message string
}{
	"audit-a/owned audit-require-team":           {"pass", ""},
	"audit-a/orphan audit-require-team":          {"fail", "team"},
	"audit-a/legacy-settings audit-require-team": {"skip", "exempted by PolicyException legacy-config: owned by the retired platform team"},
	"audit-a/owned audit-no-passwords":           {"pass", ""},
	"audit-b/db audit-no-passwords":              {"fail", "no passwords in ConfigMaps"}, // expired-secrets applies nowhere
	"audit-b/db audit-require-team":              {"pass", ""},
	"audit-a/orphan audit-only-admins":           {"skip", "depends on the request (request.userInfo)"},
}

// TestAudit creates objects, then audits them as a user who may only get
// and list: every result as the engine decides, the exception turning a
// fail into skip, the expired one applied nowhere, the request-dependent
// policy skipped with its reason.
func TestAudit(t *testing.T) {
	c := ctx(t)
	yes := map[string]string{"audit-e2e": "yes"}
	namespace(t, "audit-a", yes)
	namespace(t, "audit-b", yes)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "audit-a", Labels: map[string]string{"team": "shop"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "audit-a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "legacy-settings", Namespace: "audit-a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "audit-b", Labels: map[string]string{"team": "db"}}, Data: map[string]string{"password": "hunter2"}},
	} {
		if _, err := cluster.client.CoreV1().ConfigMaps(cm.Namespace).Create(c, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := readOnlyUser(t, "audit-reader", []string{"configmaps", "namespaces"})
	dir := t.TempDir()
	policies := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(policies, []byte(auditPolicies), 0o644); err != nil {
		t.Fatal(err)
	}

	// -o json writes the background audit's format: openreports by default,
	// wgpolicyk8s with --reports-api; the results are the same.
	for _, format := range []struct {
		flags            []string
		apiVersion, kind string
	}{
		{nil, "openreports.io/v1alpha1", "Report"},
		{[]string{"--reports-api", "wgpolicyk8s"}, "wgpolicyk8s.io/v1alpha2", "PolicyReport"},
	} {
		args := append([]string{"audit", "--kubeconfig", kubeconfig, "-c", policies, "-o", "json"}, format.flags...)
		out, stderr, code := runTollgate(t, args...)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1 (something fails): %s", format.flags, code, stderr)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r.APIVersion != format.apiVersion || r.Kind != format.kind {
			t.Errorf("%v: report is %s %s, want %s %s", format.flags, r.APIVersion, r.Kind, format.apiVersion, format.kind)
		}
		got := map[string]report.Result{}
		for _, res := range r.Results {
			ref := res.Resources[0]
			if ref.Kind != "ConfigMap" || !strings.HasPrefix(ref.Namespace, "audit-") {
				continue
			}
			got[ref.Namespace+"/"+ref.Name+" "+res.Policy] = res
		}
		for key, want := range auditWant {
			res, ok := got[key]
			if !ok {
				t.Errorf("%v: %s: no result", format.flags, key)
				continue
			}
			if string(res.Result) != want.result || !strings.Contains(res.Message, want.message) {
				t.Errorf("%v: %s: %s %q, want %s containing %q", format.flags, key, res.Result, res.Message, want.result, want.message)
			}
		}
	}
	table, _, _ := runTollgate(t, "audit", "--kubeconfig", kubeconfig, "-c", policies)
	for _, want := range []string{"RESOURCE", "ConfigMap audit-a/orphan", "ConfigMap audit-b/db", "audit-require-team  skip    exempted by PolicyException legacy-config"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	t.Logf("audit table:\n%s", table)

	// Without list on configmaps, the audit says so and exits 2: never a clean report.
	denied := readOnlyUser(t, "audit-nobody", []string{"namespaces"})
	if _, stderr, code := runTollgate(t, "audit", "--kubeconfig", denied, "-c", policies); code != 2 || !strings.Contains(stderr, "forbidden") {
		t.Errorf("without list on configmaps: exit %d, %s", code, stderr)
	}
}

// readOnlyUser gives a user get and list on the resources (core group) and
// returns a kubeconfig acting as that user: the admin's, impersonating it,
// so that RBAC decides for the user alone.
func readOnlyUser(t *testing.T, user string, resources []string) string {
	t.Helper()
	return userWith(t, user, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list"}}})
}

// userWith gives a user the rules and returns a kubeconfig acting as that
// user (readOnlyUser).
func userWith(t *testing.T, user string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	c := ctx(t)
	rbac := cluster.client.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := rbac.ClusterRoles().Create(c, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := rbac.ClusterRoleBindings().Create(c, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctx(t), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx(t), user, metav1.DeleteOptions{})
	})
	cfg, err := clientcmd.LoadFromFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runTollgate runs the tollgate binary and returns its output and exit code.
func runTollgate(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(cluster.bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
