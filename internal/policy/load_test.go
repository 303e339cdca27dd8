package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\n"

func TestDefaultsAreTheExampleFile(t *testing.T) {
	for _, copy := range []string{"../../examples/seed-policies.yaml", "../../deploy/base/policies/seed-policies.yaml"} {
		example, err := os.ReadFile(copy)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(example, DefaultsYAML()) {
			t.Errorf("%s differs from the embedded defaults (internal/policy/defaults.yaml)", copy)
		}
	}
	set, err := LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "require-environment,nginx-sidecar" {
		t.Errorf("defaults = %s", got)
	}
	c := set.Policies[1].Spec.Inject.Containers[0]
	if c.ImagePullPolicy != "IfNotPresent" || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/nginx" {
		t.Errorf("the sidecar lost fields in decoding: %+v", c)
	}
	if set.Policies[1].Spec.Inject.Volumes[0].ConfigMap.Name != "nginx-configmap" {
		t.Error("the volume lost its ConfigMap source")
	}
}

func TestParseRejects(t *testing.T) {
	valid := header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  validate: {labels: [{key: environment}]}\n"
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"unknown field", strings.Replace(valid, "validate:", "validat: {}\n  validate:", 1), []string{"document 1", `unknown field "spec.validat"`}},
		{"unknown nested field", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {containers: [{name: c, image: i, imagePullPolicyy: Always}]}\n",
			[]string{`unknown field "spec.inject.containers[0].imagePullPolicyy"`}},
		{"duplicate field", valid + "kind: Policy\n", []string{`line 7: key "kind" already set`}},
		{"no action", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n", []string{"spec: Required value", "exactly one action"}},
		{"two actions", strings.Replace(valid, "validate:", "inject: {containers: [{name: c, image: i}]}\n  validate:", 1), []string{"spec: Forbidden: a policy has exactly one action"}},
		{"no name", strings.Replace(valid, "name: p", "name: \"\"", 1), []string{"metadata.name: Required value"}},
		{"bad name", strings.Replace(valid, "name: p", "name: Not_A_Name", 1), []string{"metadata.name: Invalid value"}},
		{"bad operation", strings.Replace(valid, "resources: [pods]", "resources: [pods], operations: [CREATE, PATCH]", 1), []string{`spec.match.operations[1]: Unsupported value: "PATCH"`}},
		{"bad selector", strings.Replace(valid, "resources: [pods]", "resources: [pods], namespaceSelector: {matchExpressions: [{key: a, operator: Near}]}", 1), []string{"spec.match.namespaceSelector.matchExpressions[0].operator"}},
		{"no resources", strings.Replace(valid, "resources: [pods]", "resources: []", 1), []string{"spec.match.resources: Required value"}},
		{"bad resource", strings.Replace(valid, "resources: [pods]", "resources: [Pods]", 1), []string{"spec.match.resources[0]: Invalid value"}},
		{"bad failure policy", strings.Replace(valid, "  validate:", "  failurePolicy: Maybe\n  validate:", 1), []string{"spec.failurePolicy: Unsupported value"}},
		{"bad label key", strings.Replace(valid, "key: environment", "key: \"bad key\"", 1), []string{"spec.validate.labels[0].key: Invalid value"}},
		{"bad rule names", strings.Replace(valid, "labels: [{key: environment}]", "labels: [{key: environment}], expressions: [{name: environment, expression: 'true'}, {name: a, expression: 'true'}, {name: a, expression: 'true'}, {name: 'b c', expression: 'true'}]", 1),
			[]string{`spec.validate.expressions[0].name: Invalid value: "environment": a label rule of this policy has this key`, `spec.validate.expressions[2].name: Duplicate value: "a"`, `spec.validate.expressions[3].name: Invalid value: "b c"`}},
		{"container without name or image", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {containers: [{image: i}, {name: c}]}\n",
			[]string{"spec.inject.containers[0].name: Required value", "spec.inject.containers[1].image: Required value"}},
		{"container name twice", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {initContainers: [{name: c, image: i}], containers: [{name: c, image: i}]}\n",
			[]string{"spec.inject.containers[0].name: Duplicate value"}},
		{"inject on update", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods], operations: [CREATE, UPDATE]}\n  inject: {volumes: [{name: v, emptyDir: {}}]}\n",
			[]string{`spec.match.operations[1]: Unsupported value: "UPDATE"`}},
		{"inject into deployments", header + "metadata: {name: p}\nspec:\n  match: {resources: [apps/deployments]}\n  inject: {volumes: [{name: v, emptyDir: {}}]}\n",
			[]string{"spec.match.resources[0]: Unsupported value"}},
		{"opt-out disabled and selected", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {volumes: [{name: v, emptyDir: {}}], optOut: {disabled: true, namespaceSelector: {matchLabels: {a: b}}}}\n",
			[]string{"spec.inject.optOut.namespaceSelector: Invalid value", "set one of disabled and namespaceSelector"}},
		{"bad opt-out selector", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {volumes: [{name: v, emptyDir: {}}], optOut: {namespaceSelector: {matchLabels: {\"bad key\": b}}}}\n",
			[]string{"spec.inject.optOut.namespaceSelector.matchLabels: Invalid value"}},
		{"unknown opt-out field", header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]}\n  inject: {volumes: [{name: v, emptyDir: {}}], optOut: {namespaces: [a]}}\n",
			[]string{`unknown field "spec.inject.optOut.namespaces"`}},
		{"wrong apiVersion", strings.Replace(valid, "v1alpha1", "v1", 1), []string{"apiVersion: Unsupported value"}},
		{"not yaml", "a: [", []string{"invalid YAML"}},
		{"second document", valid + "---\n" + strings.Replace(valid, "name: p", "name: q", 1) + "  extra: 1\n", []string{"document 2", `unknown field "spec.extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("policies.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), "policies.yaml: document") {
				t.Errorf("error does not start with file and document: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	doc := header + "metadata: {name: \"\"}\nspec:\n  match: {resources: [], operations: [NOPE]}\n  validate: {labels: []}\n"
	_, err := Parse("p.yaml", []byte(doc))
	for _, w := range []string{"metadata.name", "spec.match.resources", "spec.match.operations[0]", "spec.validate: Required value"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %s", err, w)
		}
	}
}

func TestSetRejectsAcrossPolicies(t *testing.T) {
	inject := func(name, container, volume string) string {
		return header + "metadata: {name: " + name + "}\nspec:\n  match: {resources: [pods]}\n  inject:\n    containers: [{name: " + container + ", image: i}]\n    volumes: [{name: " + volume + ", emptyDir: {}}]\n"
	}
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"duplicate names across files", map[string]string{"a.yaml": inject("p", "a", "a"), "b.yaml": inject("p", "b", "b")}, `duplicate policy name "p", first defined in`},
		{"duplicate container", map[string]string{"a.yaml": inject("p", "c", "v1"), "b.yaml": inject("q", "c", "v2")}, `spec.inject.containers[0].name: "c" is also injected by policy "p"`},
		{"duplicate volume", map[string]string{"a.yaml": inject("p", "c1", "v") + "---\n" + inject("q", "c2", "v")}, `spec.inject.volumes[0].name: "v" is also injected by policy "p"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadPath(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", header+"metadata: {name: b}\nspec:\n  match: {resources: [pods]}\n  validate: {labels: [{key: x}]}\n")
	write("a.yml", "# comment only\n---\n"+header+"metadata: {name: a}\nspec:\n  match: {resources: [pods]}\n  validate: {labels: [{key: team}]}\n")
	write("notes.txt", "not a policy")
	write(".hidden.yaml", "not: [a policy")
	set, err := LoadPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "a,b" {
		t.Errorf("loaded %s, want a,b in file order", got)
	}
	if _, err := LoadPath(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no policies") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := LoadPath(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestGroups(t *testing.T) {
	doc := func(name, match, action string) string {
		return header + "metadata: {name: " + name + "}\nspec:\n  match: " + match + "\n  " + action + "\n---\n"
	}
	labels := "validate: {labels: [{key: x}]}"
	src := doc("a", "{resources: [pods], operations: [CREATE, UPDATE]}", labels) +
		doc("b", "{resources: [pods], operations: [UPDATE, CREATE]}", labels) + // same match, other order
		doc("c", "{resources: [pods]}", labels) + // defaults to CREATE, UPDATE: same again
		doc("d", "{resources: [pods], objectSelector: {matchLabels: {tier: web}}}", labels) +
		doc("e", "{resources: [pods]}", "inject: {volumes: [{name: v, emptyDir: {}}]}")
	ps, err := Parse("g.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range set.Groups {
		var names []string
		for _, p := range g.Policies {
			names = append(names, p.Name())
		}
		got = append(got, g.Path()+"="+strings.Join(names, "+"))
	}
	want := "/validate/a=a+b+c /validate/d=d /mutate/e=e"
	if strings.Join(got, " ") != want {
		t.Errorf("groups %v, want %s", got, want)
	}
}

func TestParseRejectsCEL(t *testing.T) {
	doc := header + `metadata: {name: c}
spec:
  match:
    resources: [pods]
    conditions: [{name: ok, expression: "true"}, {name: ok, expression: "1"}]
  validate:
    action: Block
    variables: [{name: "not an identifier", expression: "1"}]
    expressions:
    - expression: "object.spec.("
`
	_, err := Parse("cel.yaml", []byte(doc))
	for _, want := range []string{
		`spec.match.conditions[1].name: Duplicate value: "ok"`,
		`spec.validate.action: Unsupported value: "Block"`,
		`spec.validate.variables[0].name: Invalid value: "not an identifier"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	doc = header + "metadata: {name: c}\nspec:\n  match: {resources: [pods]}\n  validate:\n    expressions: [{expression: \"object.spec.(\"}]\n"
	_, err = Parse("cel.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), `cel.yaml: document 1: policy "c": spec.validate.expressions[0].expression: Invalid value: "object.spec.(": compilation failed`) {
		t.Errorf("compile error: %v", err)
	}
}
