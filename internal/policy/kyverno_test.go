package policy

import (
	"slices"
	"strings"
	"testing"
)

func kyvernoDoc(version, kind, meta, spec string) string {
	return "apiVersion: policies.kyverno.io/" + version + "\nkind: " + kind + "\nmetadata: " + meta + "\nspec:\n" + spec
}

const kyvernoPods = "  matchConstraints:\n    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]\n"

func TestKyvernoLoads(t *testing.T) {
	for _, tc := range []struct {
		name, doc   string
		actions     []string
		controllers []string
		conditions  int
	}{
		{"v1alpha1", kyvernoDoc("v1alpha1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: 'true'}]\n"),
			[]string{"Deny"}, []string{"cronjobs", "daemonsets", "deployments", "jobs", "replicasets", "statefulsets"}, 0},
		{"v1beta1 audit", kyvernoDoc("v1beta1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validationActions: [Audit, Warn]\n  validations: [{expression: 'true'}]\n"),
			[]string{"Audit", "Warn"}, []string{"cronjobs", "daemonsets", "deployments", "jobs", "replicasets", "statefulsets"}, 0},
		{"v1 some controllers", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  autogen: {podControllers: {controllers: [deployments, cronjobs]}}\n  validations: [{expression: 'true'}]\n"),
			[]string{"Deny"}, []string{"cronjobs", "deployments"}, 0},
		{"no autogen: two resources", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}",
			"  matchConstraints:\n    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods, services]}]\n  validations: [{expression: 'true'}]\n"),
			[]string{"Deny"}, nil, 0},
		{"no autogen: object selector", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"    objectSelector: {matchLabels: {a: b}}\n  validations: [{expression: 'true'}]\n"),
			[]string{"Deny"}, nil, 0},
		{"namespaced", kyvernoDoc("v1", "NamespacedValidatingPolicy", "{name: a, namespace: shop}", kyvernoPods+"  autogen: {podControllers: {controllers: []}}\n  validations: [{expression: 'true'}]\n"),
			[]string{"Deny"}, nil, 1},
		{"Kyverno's CEL environment", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"object.spec.containers.orValue([]).size() >= math.least(0, 1) && cel.bind(x, 1, x == 1)\"}]\n"),
			[]string{"Deny"}, []string{"cronjobs", "daemonsets", "deployments", "jobs", "replicasets", "statefulsets"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := Parse("k.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			v := ps[0].VAP
			if v == nil || v.Kyverno == nil || len(v.Bindings) != 1 {
				t.Fatalf("not a Kyverno policy with its binding: %+v", ps[0])
			}
			var actions []string
			for _, a := range v.Bindings[0].Spec.ValidationActions {
				actions = append(actions, string(a))
			}
			if !slices.Equal(actions, tc.actions) || !slices.Equal(v.Kyverno.AutogenControllers(), tc.controllers) || len(v.Policy.Spec.MatchConditions) != tc.conditions {
				t.Errorf("actions %v, controllers %v, %d match conditions", actions, v.Kyverno.AutogenControllers(), len(v.Policy.Spec.MatchConditions))
			}
		})
	}
}

// TestKyvernoAutogenRewrites: Kyverno's replacements, object.metadata.namespace kept.
func TestKyvernoAutogenRewrites(t *testing.T) {
	doc := kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+
		"  matchConditions: [{name: ns, expression: \"object.metadata.namespace != 'x'\"}]\n"+
		"  validations: [{expression: \"object.spec.containers.size() > 0 && has(object.metadata.labels) && oldObject == null\"}]\n")
	ps, err := Parse("k.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, a := range ps[0].VAP.Autogen {
		s := a.Policy.Spec
		got[strings.Join(s.MatchConstraints.ResourceRules[len(s.MatchConstraints.ResourceRules)-1].Resources, ",")] = [2]string{s.MatchConditions[0].Expression, s.Validations[0].Expression}
	}
	want := map[string][2]string{
		"cronjobs": {"object.metadata.namespace != 'x'", "object.spec.jobTemplate.spec.template.spec.containers.size() > 0 && has(object.spec.jobTemplate.spec.template.metadata.labels) && oldObject == null"},
		"jobs":     {"object.metadata.namespace != 'x'", "object.spec.template.spec.containers.size() > 0 && has(object.spec.template.metadata.labels) && oldObject == null"},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
}

func TestKyvernoRejects(t *testing.T) {
	ok := "  validations: [{expression: 'true'}]\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expresion: 'true'}]\n"), `unknown field "spec.validations[0].expresion"`},
		{"unknown spec field", kyvernoDoc("v1beta1", "ValidatingPolicy", "{name: a}", kyvernoPods+ok+"  validationAction: [Deny]\n"), `unknown field "spec.validationAction"`},
		{"namespaced in v1alpha1", kyvernoDoc("v1alpha1", "NamespacedValidatingPolicy", "{name: a, namespace: b}", kyvernoPods+ok), `apiVersion: Unsupported value: "policies.kyverno.io/v1alpha1"`},
		{"namespaced without namespace", kyvernoDoc("v1", "NamespacedValidatingPolicy", "{name: a}", kyvernoPods+ok), "metadata.namespace: Required value"},
		{"cluster policy with namespace", kyvernoDoc("v1", "ValidatingPolicy", "{name: a, namespace: b}", kyvernoPods+ok), "a ValidatingPolicy is cluster-scoped"},
		{"other kind", kyvernoDoc("v1", "MutatingPolicy", "{name: a}", kyvernoPods), `MutatingPolicy "a": kind: Unsupported value: "MutatingPolicy"`},
		{"JSON mode", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+ok+"  evaluation: {mode: JSON}\n"), `spec.evaluation.mode: Unsupported value: "JSON"`},
		{"no rules", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", ok), "spec.matchConstraints.resourceRules: Required value"},
		{"bad action", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+ok+"  validationActions: [Block]\n"), `spec.validationActions[0]: Unsupported value: "Block"`},
		{"resource.Post", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Post('v1', 'configmaps', 'x', {})\"}]\n"+ok),
			"spec.variables[0].expression: Invalid value: \"resource.Post('v1', 'configmaps', 'x', {})\": calls resource.Post, which creates objects: tollgate never writes to the cluster"},
		{"resource.ToGVR", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.ToGVR('v1', 'ConfigMap')\"}]\n"+ok), "calls resource.ToGVR, of Kyverno's CEL libraries, which tollgate does not have (it has resource.Get and resource.List)"},
		{"resource.Get of a variable resource", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Get('v1', object.kind, 'x', 'y')\"}]\n"+ok),
			"resource.Get: its apiVersion and resource must be string literals, so that tollgate knows when the policy loads which kind to list and watch"},
		{"resource.Get arity", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Get('v1', 'configmaps', 'x')\"}]\n"+ok), "resource.Get with 3 arguments: tollgate reads Get(apiVersion, resource, namespace, name)"},
		{"namespaced resource.List arity", kyvernoDoc("v1", "NamespacedValidatingPolicy", "{name: a, namespace: b}", kyvernoPods+"  variables: [{name: r, expression: \"resource.List('v1', 'configmaps', 'b')\"}]\n"+ok),
			"found no matching overload for 'resource.List' applied to '(string, string, string)'"},
		{"resource passed on", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"[resource].size()\"}]\n"+ok), "resource is read only as the receiver of resource.Get or resource.List"},
		{"resource.Get of Secrets", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Get('v1', 'secrets', 'x', 'y')\"}]\n"+ok), `spec.variables[0].expression: Invalid value: "v1 secrets": resource.Get/List of Secrets: tollgate holds a Secret's metadata only, never its data`},
		{"resource.List of a custom resource", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.List('example.com/v1', 'widgets', '')\"}]\n"+ok),
			`spec.variables[0].expression: Invalid value: "example.com/v1 widgets": resource.Get/List of a resource kube-apiserver 1.37 does not serve built in`},
		{"resource.Get of a subresource", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Get('v1', 'pods/status', 'x', 'y')\"}]\n"+ok), `spec.variables[0].expression: Invalid value: "v1 pods/status": resource.Get/List of a subresource: tollgate holds objects, not subresources`},
		{"resource.Get compared with null", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  variables: [{name: r, expression: \"resource.Get('v1', 'configmaps', 'x', 'y')\"}]\n  validations: [{expression: 'variables.r == null'}]\n"),
			"found no matching overload for '_==_' applied to '(map(string, any), null)'"},
		{"resource.List items ranged over", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"resource.List('v1', 'configmaps', '').items.all(c, c.metadata.name != 'x')\"}]\n"),
			"expression of type 'any' cannot be range of a comprehension (must be list, map, or dynamic)"},
		{"image.GetMetadata", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"object.spec.containers.all(c, image.GetMetadata(c.image).config.user != '')\"}]\n"),
			"calls image.GetMetadata, of Kyverno's CEL libraries"},
		{"params", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"object.spec.containers.all(c, c.image in params.allowedImages)\"}]\n"),
			"undeclared reference to 'params': Kyverno policies have no params"},
		{"exceptions as a field", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"exceptions.allowedImages.size() >= 0 && exceptions.nothing.size() == 0\"}]\n"),
			"undefined field 'nothing' of exceptions"},
		{"not a library", kyvernoDoc("v1", "ValidatingPolicy", "{name: a}", kyvernoPods+"  validations: [{expression: \"object.spec.containers.all(c, c.image.startsWith(1))\"}]\n"),
			"found no matching overload for 'startsWith'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("k.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "k.yaml: document 1: ") {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
