package exception

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func decodeYAML(t *testing.T, doc string) (*Exception, []string) {
	t.Helper()
	js, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !Is(js) {
		t.Fatalf("not a PolicyException: %s", doc)
	}
	e, errs := Decode(js)
	var msgs []string
	for _, fe := range errs {
		msgs = append(msgs, fe.Error())
	}
	return e, msgs
}

const header = "apiVersion: tollgate.dev/v1alpha1\nkind: PolicyException\n"

func TestDecode(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []string // substrings, one per error, in order
	}{
		{"valid", `metadata: {name: cni}
spec:
  policies: [no-privileged]
  match: {namespaces: [kube-*], names: ["cilium-?"], kinds: [apps/DaemonSet, Pod], selector: {matchLabels: {app: cni}}}
  reason: the CNI agent needs the host network
  expiresAt: "2030-01-02T03:04:05Z"`, nil},
		{"missing everything", `metadata: {}
spec: {match: {}}`, []string{"metadata.name: Required", "spec.policies: Required", "spec.reason: Required", "spec.match: Required"}},
		{"unknown field", `metadata: {name: x}
spec: {policies: [p], reason: r, match: {names: [a]}, rule: [x]}`, []string{`unknown field "spec.rule"`}},
		{"bad rules", `metadata: {name: x}
spec: {policies: [p], rules: [team, "", team], reason: r, match: {names: [a]}}`, []string{"spec.rules[1]: Required", "spec.rules[2]: Duplicate"}},
		{"bad values", `metadata: {name: Bad_Name}
spec:
  policies: [p, p, ""]
  reason: "  "
  match: {names: ["[a"], namespaces: [""], kinds: [a/b/C, "apps/"], selector: {matchExpressions: [{key: a, operator: Huh}]}}`,
			[]string{"metadata.name: Invalid value", "spec.policies[1]: Duplicate", "spec.policies[2]: Required", "spec.reason: Required",
				"spec.match.namespaces[0]: Required", "spec.match.names[0]: Invalid", "spec.match.kinds[0]: Invalid", "spec.match.kinds[1]: Invalid", "spec.match.selector: Invalid"}},
		{"bad expiry", `metadata: {name: x}
spec: {policies: [p], reason: r, match: {names: [a]}, expiresAt: next tuesday}`, []string{"next tuesday"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got := decodeYAML(t, header+tt.doc)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestIndexFind(t *testing.T) {
	cni, errs := decodeYAML(t, header+`metadata: {name: cni}
spec:
  policies: [no-privileged, no-host-network]
  match: {namespaces: [kube-*, net], names: [cilium-*], kinds: [apps/DaemonSet, Pod], selector: {matchLabels: {app: cni}}}
  reason: the CNI agent
  expiresAt: "2030-01-01T00:00:00Z"`)
	legacy, errs2 := decodeYAML(t, header+`metadata: {name: legacy}
spec: {policies: [no-privileged], match: {names: [legacy]}, reason: being retired}`)
	images, errs3 := decodeYAML(t, header+`metadata: {name: images}
spec: {policies: [no-privileged, require-team], rules: [pinned-images, team], match: {names: [legacy, build-*]}, reason: builds pull latest}`)
	builds, errs4 := decodeYAML(t, header+`metadata: {name: builds}
spec: {policies: [require-team], rules: [team, owner], match: {names: [build-*]}, reason: build pods are short-lived}`)
	if len(errs)+len(errs2)+len(errs3)+len(errs4) > 0 {
		t.Fatal(errs, errs2, errs3, errs4)
	}
	ds := schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	pod := schema.GroupKind{Kind: "Pod"}
	cilium := Object{Kind: ds, Namespace: "net", Name: "cilium-agent", Labels: map[string]string{"app": "cni"}}
	before := time.Date(2029, 12, 31, 23, 59, 59, 0, time.UTC)
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		now    time.Time
		policy string
		obj    Object
		want   string // the exception lifting the whole policy
		rules  string // rule=exception, for rules lifted
	}{
		{"all fields match", before, "no-privileged", cilium, "cni", ""},
		{"second policy", before, "no-host-network", cilium, "cni", ""},
		{"policy not named", before, "require-team", cilium, "", ""},
		{"expired at the instant", at, "no-privileged", cilium, "", ""},
		{"expired does not hide the next", at, "no-privileged", Object{Kind: pod, Namespace: "a", Name: "legacy"}, "legacy", ""},
		{"namespace wildcard", before, "no-privileged", Object{Kind: ds, Namespace: "kube-system", Name: "cilium-x", Labels: map[string]string{"app": "cni"}}, "cni", ""},
		{"other namespace", before, "no-privileged", Object{Kind: ds, Namespace: "shop", Name: "cilium-x", Labels: map[string]string{"app": "cni"}}, "", ""},
		{"other name", before, "no-privileged", Object{Kind: ds, Namespace: "net", Name: "calico", Labels: map[string]string{"app": "cni"}}, "", ""},
		{"kind in another group", before, "no-privileged", Object{Kind: schema.GroupKind{Group: "x.io", Kind: "DaemonSet"}, Namespace: "net", Name: "cilium-a", Labels: map[string]string{"app": "cni"}}, "", ""},
		{"unqualified kind, core group", before, "no-privileged", Object{Kind: pod, Namespace: "net", Name: "cilium-a", Labels: map[string]string{"app": "cni"}}, "cni", ""},
		{"selector", before, "no-privileged", Object{Kind: ds, Namespace: "net", Name: "cilium-a"}, "", ""},
		{"a whole exception wins over rules", before, "no-privileged", Object{Kind: pod, Namespace: "a", Name: "legacy"}, "legacy", ""},
		{"rules only", before, "require-team", Object{Kind: pod, Namespace: "a", Name: "legacy"}, "", "pinned-images=images team=images"},
		{"rules of two exceptions, first in load order", before, "require-team", Object{Kind: pod, Namespace: "a", Name: "build-1"}, "", "owner=builds pinned-images=images team=images"},
		{"rules, object not matched", before, "require-team", Object{Kind: pod, Namespace: "a", Name: "web"}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ix := NewIndex([]*Exception{cni, legacy, images, builds}, func() time.Time { return tt.now })
			x := ix.Find(tt.policy, tt.obj)
			if got := x.Whole.Name(); got != tt.want {
				t.Errorf("Find().Whole = %q, want %q", got, tt.want)
			}
			var rules []string
			for r, e := range x.Rules {
				rules = append(rules, r+"="+e.Name())
			}
			slices.Sort(rules)
			if got := strings.Join(rules, " "); got != tt.rules {
				t.Errorf("Find().Rules = %q, want %q", got, tt.rules)
			}
			if x.None() != (tt.want == "" && tt.rules == "") {
				t.Errorf("None() = %v", x.None())
			}
		})
	}
}

func TestUnique(t *testing.T) {
	a := &Exception{Metadata: Metadata{Name: "a"}, Source: "f: document 1"}
	b := &Exception{Metadata: Metadata{Name: "a"}, Source: "f: document 2"}
	if err := Unique([]*Exception{a, b}); err == nil || !strings.Contains(err.Error(), "first defined in f: document 1") {
		t.Errorf("Unique = %v", err)
	}
	if err := Unique([]*Exception{a}); err != nil {
		t.Error(err)
	}
}
