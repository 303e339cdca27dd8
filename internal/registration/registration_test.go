package registration

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

func defaults(t *testing.T) *policy.Set {
	t.Helper()
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestBuildDefaults(t *testing.T) {
	excluded := []string{"kube-node-lease", "kube-public", "kube-system", "tollgate-system"}
	m, v, err := Build(defaults(t), Options{URL: "https://127.0.0.1:8443/", CABundle: []byte("CA"), ExcludedNamespaces: excluded})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Webhooks) != 1 || len(v.Webhooks) != 1 {
		t.Fatalf("webhooks: %d mutating, %d validating", len(m.Webhooks), len(v.Webhooks))
	}
	mw, vw := m.Webhooks[0], v.Webhooks[0]
	if *mw.ClientConfig.URL != "https://127.0.0.1:8443/mutate/nginx-sidecar" || *vw.ClientConfig.URL != "https://127.0.0.1:8443/validate/require-environment" {
		t.Errorf("urls %s %s", *mw.ClientConfig.URL, *vw.ClientConfig.URL)
	}
	if mw.Name != "nginx-sidecar.mutate.tollgate.dev" || *mw.FailurePolicy != admissionregistrationv1.Ignore || *vw.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("names or failure policies: %s %s %s", mw.Name, *mw.FailurePolicy, *vw.FailurePolicy)
	}
	if *mw.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy || *mw.SideEffects != admissionregistrationv1.SideEffectClassNone ||
		*mw.TimeoutSeconds != 5 || *mw.MatchPolicy != admissionregistrationv1.Equivalent || strings.Join(mw.AdmissionReviewVersions, ",") != "v1,v1beta1" {
		t.Errorf("mutating webhook settings: %+v", mw)
	}
	wantNS := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"sidecar-injection": "enabled"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: NamespaceNameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: excluded}},
	}
	if got, _ := yaml.Marshal(mw.NamespaceSelector); string(got) != mustYAML(t, wantNS) {
		t.Errorf("namespaceSelector:\n%s\nwant:\n%s", got, mustYAML(t, wantNS))
	}
	r := vw.Rules[0]
	if strings.Join(r.APIGroups, ",") != "" || r.Resources[0] != "pods" || len(r.Operations) != 2 {
		t.Errorf("validating rule: %+v", r)
	}
}

func mustYAML(t *testing.T, v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildService(t *testing.T) {
	_, v, err := Build(defaults(t), Options{Service: &Service{Name: "tollgate", Namespace: "tollgate-system"}, CABundle: []byte("CA"), TimeoutSeconds: 10})
	if err != nil {
		t.Fatal(err)
	}
	s := v.Webhooks[0].ClientConfig.Service
	if s.Name != "tollgate" || s.Namespace != "tollgate-system" || *s.Port != 443 || *s.Path != "/validate/require-environment" || *v.Webhooks[0].TimeoutSeconds != 10 {
		t.Errorf("service reference %+v", s)
	}
}

func TestBuildRejects(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"nowhere", Options{CABundle: []byte("CA")}, "URL or its service"},
		{"both", Options{URL: "https://a", Service: &Service{Name: "a", Namespace: "b"}, CABundle: []byte("CA")}, "not both"},
		{"http", Options{URL: "http://a:80", CABundle: []byte("CA")}, "want https"},
		{"query", Options{URL: "https://a/?x=1", CABundle: []byte("CA")}, "no query"},
		{"no CA", Options{URL: "https://a"}, "CA bundle"},
		{"timeout", Options{URL: "https://a", CABundle: []byte("CA"), TimeoutSeconds: 31}, "1 to 30"},
		{"service without namespace", Options{Service: &Service{Name: "a"}, CABundle: []byte("CA")}, "name and a namespace"},
		{"failure policy", Options{URL: "https://a", CABundle: []byte("CA"), FailurePolicy: "Sometimes"}, `failure policy "Sometimes": want Fail or Ignore`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Build(defaults(t), tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestYAMLSkipsMissingConfigurations(t *testing.T) {
	var m *admissionregistrationv1.MutatingWebhookConfiguration
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	out, err := YAML(m, v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "---") || !strings.Contains(string(out), "name: x") {
		t.Errorf("output:\n%s", out)
	}
}

func TestBuildCertManager(t *testing.T) {
	m, v, err := Build(defaults(t), Options{Service: &Service{Name: "tollgate", Namespace: "tollgate-system"}, CAInjectFrom: "tollgate-system/tollgate-serving"})
	if err != nil {
		t.Fatal(err)
	}
	for _, meta := range []metav1.ObjectMeta{m.ObjectMeta, v.ObjectMeta} {
		if meta.Annotations["cert-manager.io/inject-ca-from"] != "tollgate-system/tollgate-serving" {
			t.Errorf("annotations %v", meta.Annotations)
		}
	}
	if len(v.Webhooks[0].ClientConfig.CABundle) != 0 {
		t.Error("caBundle set although cert-manager injects it")
	}
	out, _ := YAML(v)
	if strings.Contains(string(out), "caBundle") {
		t.Error("caBundle written: server-side apply would own the field cert-manager writes")
	}
}

// TestBuildFailurePolicyOverride: the operator's failure policy replaces
// every policy's own (the seed policies have one of each), VAPs included.
func TestBuildFailurePolicyOverride(t *testing.T) {
	set, err := policy.LoadPath("../../test/e2e/testdata/vap-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*policy.Set{defaults(t), set} {
		for _, want := range []admissionregistrationv1.FailurePolicyType{"", admissionregistrationv1.Fail, admissionregistrationv1.Ignore} {
			m, v, err := Build(s, Options{URL: "https://a", CABundle: []byte("CA"), FailurePolicy: want})
			if err != nil {
				t.Fatal(err)
			}
			var got []admissionregistrationv1.FailurePolicyType
			if m != nil {
				for _, w := range m.Webhooks {
					got = append(got, *w.FailurePolicy)
				}
			}
			for _, w := range v.Webhooks {
				got = append(got, *w.FailurePolicy)
			}
			seen := map[admissionregistrationv1.FailurePolicyType]bool{}
			for _, g := range got {
				seen[g] = true
			}
			switch {
			case want == "" && s != set && !(seen[admissionregistrationv1.Fail] && seen[admissionregistrationv1.Ignore]):
				t.Errorf("no override: want each policy's own (Fail and Ignore), got %v", got)
			case want != "" && (len(seen) != 1 || !seen[want]):
				t.Errorf("override %s: got %v", want, got)
			}
		}
	}
}

// TestBuildVAPBindings: a webhook entry per distinct binding selectors,
// each carrying the policy's and the bindings' selectors ANDed (with the
// excluded namespaces), the policy's rules and failure policy, on the
// binding's path; no entry for a policy without bindings.
func TestBuildVAPBindings(t *testing.T) {
	set, err := policy.LoadPath("testdata/vap-bindings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, v, err := Build(set, Options{URL: "https://tollgate:8443", CABundle: []byte("CA"), ExcludedNamespaces: []string{"kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	notExempt := metav1.LabelSelectorRequirement{Key: "exempt", Operator: metav1.LabelSelectorOpDoesNotExist}
	excluded := metav1.LabelSelectorRequirement{Key: NamespaceNameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}
	want := []struct {
		name, url string
		ns, obj   *metav1.LabelSelector
	}{
		{"enforce.binding.vap.tollgate.dev", "https://tollgate:8443/validate/pod-images/enforce",
			&metav1.LabelSelector{
				MatchLabels: map[string]string{"team": "a", "stage": "prod"},
				// team: a (policy) and team: b (binding) select nothing together.
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"b"}}, excluded},
			},
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{notExempt}}},
		{"observe.binding.vap.tollgate.dev", "https://tollgate:8443/validate/pod-images/observe",
			&metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}, MatchExpressions: []metav1.LabelSelectorRequirement{excluded}},
			&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{notExempt}}},
	}
	if len(v.Webhooks) != len(want) {
		t.Fatalf("%d webhooks, want %d: %s", len(v.Webhooks), len(want), mustYAML(t, v.Webhooks))
	}
	for i, w := range want {
		got := v.Webhooks[i]
		if got.Name != w.name || *got.ClientConfig.URL != w.url {
			t.Errorf("webhook %d: %s at %s, want %s at %s", i, got.Name, *got.ClientConfig.URL, w.name, w.url)
		}
		if g, wy := mustYAML(t, got.NamespaceSelector), mustYAML(t, w.ns); g != wy {
			t.Errorf("%s namespaceSelector:\n%s\nwant:\n%s", w.name, g, wy)
		}
		if g, wy := mustYAML(t, got.ObjectSelector), mustYAML(t, w.obj); g != wy {
			t.Errorf("%s objectSelector:\n%s\nwant:\n%s", w.name, g, wy)
		}
		if *got.FailurePolicy != admissionregistrationv1.Ignore || len(got.Rules) != 1 || got.Rules[0].Resources[0] != "pods" || *got.MatchPolicy != admissionregistrationv1.Equivalent {
			t.Errorf("%s: failure policy %s, rules %+v", w.name, *got.FailurePolicy, got.Rules)
		}
	}
}

// TestBuildSharedWebhooks: ValidatingAdmissionPolicies whose failurePolicy,
// matchPolicy and selectors agree are one webhook entry, on the first
// one's path, with the rules of all (each once); the others have their own.
func TestBuildSharedWebhooks(t *testing.T) {
	set, err := policy.LoadPath("testdata/shared-webhooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, v, err := Build(set, Options{URL: "https://tollgate:8443", CABundle: []byte("CA")})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, url string
		resources []string
		failure   admissionregistrationv1.FailurePolicyType
	}{
		{"images.binding.vap.tollgate.dev", "https://tollgate:8443/validate/images/images", []string{"pods", "deployments"}, admissionregistrationv1.Fail},
		{"labels.binding.vap.tollgate.dev", "https://tollgate:8443/validate/labels/labels", []string{"pods"}, admissionregistrationv1.Ignore},
		{"team-a.binding.vap.tollgate.dev", "https://tollgate:8443/validate/team-a/team-a", []string{"pods"}, admissionregistrationv1.Fail},
		{"exact.binding.vap.tollgate.dev", "https://tollgate:8443/validate/exact/exact", []string{"pods"}, admissionregistrationv1.Fail},
	}
	if len(v.Webhooks) != len(want) {
		t.Fatalf("%d webhooks, want %d: %s", len(v.Webhooks), len(want), mustYAML(t, v.Webhooks))
	}
	for i, w := range want {
		got := v.Webhooks[i]
		var resources []string
		for _, r := range got.Rules {
			resources = append(resources, r.Resources...)
		}
		if got.Name != w.name || *got.ClientConfig.URL != w.url || *got.FailurePolicy != w.failure || !slices.Equal(resources, w.resources) {
			t.Errorf("webhook %d: %s at %s, %s, rules for %v; want %s at %s, %s, rules for %v",
				i, got.Name, *got.ClientConfig.URL, *got.FailurePolicy, resources, w.name, w.url, w.failure, w.resources)
		}
	}
	var served []string
	for _, p := range set.Groups[0].BindingWebhooks[0].Group.Policies {
		served = append(served, p.Name())
	}
	if want := []string{"images", "replicas", "images-again", "team-warning"}; !slices.Equal(served, want) {
		t.Errorf("the shared entry serves %v, want %v", served, want)
	}
}
