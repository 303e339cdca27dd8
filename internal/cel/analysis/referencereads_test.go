package analysis_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// TestReferenceReads holds what the analysis finds a policy reads of its
// references' objects, which is all the store keeps of them.
func TestReferenceReads(t *testing.T) {
	const base = "apiVersion kind metadata.name metadata.namespace"
	for _, tc := range []struct {
		name      string
		variables []string
		rules     []string
		key       string // an index key of references.svc
		want      string
	}{
		{name: "existence", rules: []string{"references.svc.get('a', 'b') != null"}, want: "[" + base + "]"},
		{name: "a field's value", rules: []string{"references.svc.get('a', 'b').spec.clusterIP == 'None'"}, want: "[" + base + " spec.clusterIP]"},
		{name: "presence", rules: []string{"has(references.svc.get('a', 'b').spec.selector)"}, want: "[" + base + " spec.selector(present)]"},
		{name: "through a comprehension", rules: []string{"references.svc.objects().all(s, s.spec.type != 'NodePort')"}, want: "[" + base + " spec.type]"},
		{name: "size of the list only", rules: []string{"references.svc.inNamespace('a').size() < 3"}, want: "[" + base + "]"},
		{name: "through variables and filter", variables: []string{"references.svc.inNamespace(request.namespace).filter(s, has(s.spec.selector))"},
			rules: []string{"variables.v0.map(s, s.metadata.labels).size() == 0"}, want: "[apiVersion kind metadata.labels metadata.name metadata.namespace spec.selector(present)]"},
		{name: "an iterated list", rules: []string{"references.svc.objects().all(s, s.spec.ports.all(p, p.port != 22))"}, want: "[" + base + " spec.ports(map whole) spec.ports.port]"},
		{name: "a literal key", rules: []string{"references.svc.objects().all(s, s.metadata.labels['app.kubernetes.io/name'] != 'x')"}, want: "[apiVersion kind metadata.labels.app.kubernetes.io/name metadata.name metadata.namespace]"},
		{name: "a key not known", rules: []string{"references.svc.objects().all(s, s.metadata.labels[object.metadata.name] != 'x')"}, want: "[apiVersion kind metadata.labels metadata.name metadata.namespace]"},
		{name: "a list element", rules: []string{"references.svc.get('a', 'b').spec.ports[0].port == 80"}, want: "[" + base + " spec.ports.port]"},
		{name: "optional select", rules: []string{"references.svc.get('a', 'b').?spec.?type.orValue('') == 'x'"}, want: "[" + base + " spec.type]"},
		{name: "conditional handles", rules: []string{"(object.kind == 'A' ? references.svc : references.svc).get('a', 'b').spec.type == 'x'"}, want: "[" + base + " spec.type]"},
		{name: "the index key", key: "object.spec.selector", rules: []string{"references.svc.byKey('k', 'x').size() == 0"}, want: "[" + base + " spec.selector]"},
		// Whole objects: what the analysis does not follow.
		{name: "an object as a value", rules: []string{"references.svc.get('a', 'b') == object"}, want: "*"},
		{name: "an object's own keys", rules: []string{"references.svc.objects().all(s, s.all(k, k != 'status'))"}, want: "*"},
		{name: "an object in a list", rules: []string{"references.svc.objects().all(s, s in [object])"}, want: "*"},
		{name: "a list of objects compared", rules: []string{"references.svc.objects() == []"}, want: "*"},
		{name: "size of an object", rules: []string{"references.svc.get('a', 'b').size() > 3"}, want: "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := refs.Declaration{Name: "svc", APIVersion: "v1", Kind: "Service"}
			if tc.key != "" {
				d.Indexes = []refs.Index{{Name: "k", Key: tc.key}}
			}
			c, errs := refs.Compile(d, field.NewPath("spec", "references").Index(0))
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			spec := cel.Spec{Name: "p", References: []*refs.Compiled{c}}
			var variables []analysis.Variable
			for i, v := range tc.variables {
				name := "v" + string(rune('0'+i))
				spec.Variables = append(spec.Variables, cel.NamedExpression{Name: name, Expression: v})
				variables = append(variables, analysis.Variable{Name: name, Expression: v})
			}
			for _, r := range tc.rules {
				spec.Validations = append(spec.Validations, cel.Validation{Expression: r})
			}
			if _, errs := cel.Compile(spec, field.NewPath("spec", "validate")); len(errs) > 0 {
				t.Fatalf("does not compile: %v", errs.ToAggregate())
			}
			reads := analysis.ReferenceReads(spec.References, variables, tc.rules...)
			c.SetRead(reads["svc"])
			if got := c.Keeps(); got != tc.want {
				t.Errorf("keeps %s\nwant  %s", got, tc.want)
			}
		})
	}
}

// TestReferenceReadsUnparsed: an expression the analysis cannot parse
// keeps every reference's objects whole, never less than is read.
func TestReferenceReadsUnparsed(t *testing.T) {
	c, errs := refs.Compile(refs.Declaration{Name: "svc", APIVersion: "v1", Kind: "Service"}, field.NewPath("spec", "references").Index(0))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	reads := analysis.ReferenceReads([]*refs.Compiled{c}, nil, "references.svc.objects().size() > 0", "references.svc.(")
	c.SetRead(reads["svc"])
	if got := c.Keeps(); got != "*" {
		t.Errorf("keeps %s, want *", got)
	}
}
