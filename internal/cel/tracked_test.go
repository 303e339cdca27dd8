package cel_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// named is a compiled program and where it comes from.
type named struct {
	name string
	p    *cel.Program
}

// libraryPrograms are the CEL programs of every policy of the library and
// of the engine's CEL test policies.
func libraryPrograms(t testing.TB) []named {
	t.Helper()
	progs, err := benchpolicies.Programs("../../policies", "../engine/testdata/cel-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []named
	for _, p := range progs {
		out = append(out, named{p.Name, p.Program.Count()})
	}
	return out
}

// corpusPrograms are the ValidatingAdmissionPolicies of the end-to-end
// differential corpus as tollgate CEL specs (variables, match conditions,
// validations), those that compile without params, and testdata/budget.yaml.
func corpusPrograms(t testing.TB) []named {
	t.Helper()
	var out []named
	files, _ := filepath.Glob("../../test/e2e/testdata/vap-*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := splitVAPs(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range docs {
			spec := cel.Spec{Name: v.Name}
			for _, x := range v.Spec.Variables {
				spec.Variables = append(spec.Variables, cel.NamedExpression{Name: x.Name, Expression: x.Expression})
			}
			for _, c := range v.Spec.MatchConditions {
				spec.Conditions = append(spec.Conditions, cel.NamedExpression{Name: c.Name, Expression: c.Expression})
			}
			for _, x := range v.Spec.Validations {
				r := ""
				if x.Reason != nil {
					r = string(*x.Reason)
				}
				spec.Validations = append(spec.Validations, cel.Validation{Expression: x.Expression, Message: x.Message, MessageExpression: x.MessageExpression, Reason: r})
			}
			if p, errs := cel.Compile(spec, field.NewPath("spec")); len(errs) == 0 {
				out = append(out, named{f + ": " + v.Name, p.Count()})
			}
		}
	}
	data, err := os.ReadFile("testdata/budget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var budget []struct {
		Name        string                `json:"name"`
		Variables   []cel.NamedExpression `json:"variables"`
		Validations []cel.Validation      `json:"validations"`
	}
	if err := yaml.Unmarshal(data, &budget); err != nil {
		t.Fatal(err)
	}
	for _, b := range budget {
		p, errs := cel.Compile(cel.Spec{Name: b.Name, Variables: b.Variables, Validations: b.Validations}, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(b.Name, errs)
		}
		out = append(out, named{"budget.yaml: " + b.Name, p.Count()})
	}
	return out
}

// splitVAPs reads the ValidatingAdmissionPolicies of a multi-document file.
func splitVAPs(data []byte) ([]*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
	var out []*admissionregistrationv1.ValidatingAdmissionPolicy
	for _, doc := range splitYAML(data) {
		var v admissionregistrationv1.ValidatingAdmissionPolicy
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, err
		}
		if v.Kind == "ValidatingAdmissionPolicy" {
			out = append(out, &v)
		}
	}
	return out, nil
}

// inputs are the requests the programs are evaluated on: the captured Pod
// reviews (create, update, delete), the Pod Security fixture Pods and the
// edge-case Pods of testdata/pods created, and a few objects of the kinds
// the corpus matches.
func inputs(t testing.TB) map[string]func() *cel.Input {
	t.Helper()
	out := map[string]func() *cel.Input{}
	for _, f := range []string{"review-pod-create.json", "review-pod-update.json", "review-pod-delete.json"} {
		body, err := os.ReadFile(filepath.Join("../admission/testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		review, err := admission.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		req := &review.Request
		out[f] = func() *cel.Input {
			in, err := requestInput(req.Object(), req.OldObject(), req.Kind, req.Resource, string(req.Operation), req.Namespace, nil)
			if err != nil {
				t.Fatal(err)
			}
			return in
		}
	}
	fixtures, _ := filepath.Glob("../../policies/testdata/pod-security/*.yaml")
	for _, f := range fixtures {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(data) {
			js, err := yaml.YAMLToJSON(doc)
			if err != nil || string(js) == "null" {
				continue
			}
			out[fmt.Sprintf("%s #%d", filepath.Base(f), i)] = podInput(t, js)
		}
	}
	// Pods with repeated names, escapes, nulls and values of unexpected
	// kinds, which the readers of the JSON must read as decoding does.
	pods, _ := filepath.Glob("testdata/pods/*.json")
	for _, f := range pods {
		js, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = podInput(t, js)
	}
	gold := namespaces.Of("shop", map[string]string{"tier": "gold"})
	for name, obj := range map[string]string{
		"deployment": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"case":"max"}},"spec":{"replicas":7,"template":{"spec":{"containers":[{"name":"app","image":"registry.example.com/app:latest"}]}}}}`,
		"configmap":  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop"},"data":{"a":"1","b":"2","Bad_Key":"3","d":"4"}}`,
		"secret":     `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"shop"},"type":"kubernetes.io/basic-auth","data":{"password":"c2hvcnQ="}}`,
		"service":    `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc","namespace":"shop"},"spec":{"type":"NodePort","ports":[{"port":22},{"port":443}]}}`,
	} {
		gvk, gvr := kindOf(name)
		out[name] = func() *cel.Input {
			in, err := requestInput([]byte(obj), nil, gvk, gvr, "CREATE", "shop", gold)
			if err != nil {
				t.Fatal(err)
			}
			return in
		}
	}
	return out
}

func kindOf(name string) (schema.GroupVersionKind, schema.GroupVersionResource) {
	switch name {
	case "deployment":
		return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	case "configmap":
		return schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	case "secret":
		return schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	}
	return schema.GroupVersionKind{Version: "v1", Kind: "Service"}, schema.GroupVersionResource{Version: "v1", Resource: "services"}
}

// podInput is a Pod CREATE of js in namespace shop.
func podInput(t testing.TB, js []byte) func() *cel.Input {
	return func() *cel.Input {
		in, err := requestInput(js, nil, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "CREATE", "shop", nil)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
}

func requestInput(obj, old []byte, kind schema.GroupVersionKind, resource schema.GroupVersionResource, op, ns string, nsObj *corev1.Namespace) (*cel.Input, error) {
	o, err := cel.RuntimeObject(obj)
	if err != nil {
		return nil, err
	}
	oo, err := cel.RuntimeObject(old)
	if err != nil {
		return nil, err
	}
	return &cel.Input{Object: o, OldObject: oo, ObjectJSON: obj, OldObjectJSON: old, Kind: kind, Resource: resource, Name: "n", Namespace: ns, Operation: op,
		User: &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}, NamespaceObject: nsObj}, nil
}

// compare evaluates every program on one input each way, the programs of
// one way sharing their input as the engine shares it, and requires the
// same outcome of each. Evaluate gets the objects as JSON only, as the
// engine gives them (the values read from the bytes; decoded only for the
// match conditions), EvaluateTracked as decoded objects only.
func compare(t *testing.T, programs []named, name string, in func() *cel.Input) (denied, failed int) {
	t.Helper()
	fast, ref := fastInput(in()), trackedInput(in())
	for _, p := range programs {
		got := p.p.Evaluate(context.Background(), fast)
		want := p.p.EvaluateTracked(context.Background(), ref)
		if !sameVerdict(got, want) {
			t.Errorf("%s on %s:\n got  %+v\n want %+v", p.name, name, got, want)
		}
		if len(want.Violations) > 0 {
			denied++
		}
		if want.Err != nil {
			failed++
		}
	}
	return denied, failed
}

// fastInput is in with its objects as the review's JSON only, read as the
// engine reads a review's: slices of an AdmissionReview body that
// admission.Decode validated, indexed and sized (Input.Indexed).
func fastInput(in *cel.Input) *cel.Input {
	if in.ObjectJSON != nil {
		in.Object = nil
	}
	if in.OldObjectJSON != nil {
		in.OldObject = nil
	}
	if review, err := admission.Decode(reviewBody(in)); err == nil {
		req := &review.Request
		in.ObjectJSON, in.OldObjectJSON, in.Indexed = req.Object(), req.OldObject(), req.Indexed()
	}
	return in
}

// reviewBody is an AdmissionReview carrying in's request and objects.
func reviewBody(in *cel.Input) []byte {
	q := strconv.Quote
	object := func(raw []byte) string {
		if raw == nil {
			return "null"
		}
		return string(raw)
	}
	user := "{}"
	if in.User != nil {
		user = `{"username":` + q(in.User.GetName()) + `}`
	}
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",` +
		`"kind":{"group":` + q(in.Kind.Group) + `,"version":` + q(in.Kind.Version) + `,"kind":` + q(in.Kind.Kind) + `},` +
		`"resource":{"group":` + q(in.Resource.Group) + `,"version":` + q(in.Resource.Version) + `,"resource":` + q(in.Resource.Resource) + `},` +
		`"name":` + q(in.Name) + `,"namespace":` + q(in.Namespace) + `,"operation":` + q(in.Operation) + `,"userInfo":` + user + `,` +
		`"object":` + object(in.ObjectJSON) + `,"oldObject":` + object(in.OldObjectJSON) + `}}`)
}

// trackedInput is in with its objects decoded only.
func trackedInput(in *cel.Input) *cel.Input {
	in.ObjectJSON, in.OldObjectJSON = nil, nil
	return in
}

func sameVerdict(a, b cel.Verdict) bool {
	if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && a.Err.Error() != b.Err.Error()) {
		return false
	}
	if len(a.RuleErrors) != len(b.RuleErrors) {
		return false
	}
	for i := range a.RuleErrors {
		if a.RuleErrors[i].Rule != b.RuleErrors[i].Rule || a.RuleErrors[i].Err.Error() != b.RuleErrors[i].Err.Error() {
			return false
		}
	}
	return a.Skipped == b.Skipped && reflect.DeepEqual(a.Violations, b.Violations)
}

// TestEvaluateAsReference: Evaluate decides as the apiserver's validator
// (EvaluateTracked) every library policy and every policy of the
// differential corpus, on every input.
func TestEvaluateAsReference(t *testing.T) {
	var programs []named
	for _, p := range append(libraryPrograms(t), corpusPrograms(t)...) {
		if !strings.HasPrefix(p.name, "budget.yaml: ") { // TestBudgetAsReference's: each costs a second
			programs = append(programs, p)
		}
	}
	var denied, failed, cases int
	for name, in := range inputs(t) {
		d, f := compare(t, programs, name, in)
		denied, failed, cases = denied+d, failed+f, cases+len(programs)
	}
	var fast, direct, directDenied int64
	for _, p := range programs {
		fast, direct, directDenied = fast+p.p.FastAdmits(), direct+p.p.DirectAdmits(), directDenied+p.p.DirectDenials()
	}
	t.Logf("%d programs, %d evaluations: %d denied, %d failed, %d admitted on the fast path, %d of them by the direct evaluator, which denied %d", len(programs), cases, denied, failed, fast, direct, directDenied)
	if denied == 0 || failed == 0 || fast < int64(cases)/4 || direct < fast/2 || directDenied < int64(denied)/4 {
		t.Errorf("the inputs should include denials (%d), failures (%d), fast admissions (%d), direct ones (%d) and direct denials (%d)", denied, failed, fast, direct, directDenied)
	}
}

// TestBudgetAsReference: the cost limits fail as in the apiserver: an
// expression over the per-call limit, and variables whose cost, charged
// again where the message expressions read them, exceeds the budget.
func TestBudgetAsReference(t *testing.T) {
	in := podInput(t, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i"}]}}`))
	for _, p := range corpusPrograms(t) {
		if !strings.HasPrefix(p.name, "budget.yaml: ") {
			continue
		}
		got, want := p.p.Evaluate(context.Background(), fastInput(in())), p.p.EvaluateTracked(context.Background(), trackedInput(in()))
		if !sameVerdict(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", p.name, got, want)
		}
		if want.Err == nil {
			t.Errorf("%s: want a cost error, got %+v", p.name, want)
		}
		t.Logf("%s: %v", p.name, want.Err)
	}
}

// splitYAML splits a multi-document YAML file.
func splitYAML(data []byte) [][]byte {
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err != nil {
			return out
		}
		out = append(out, doc)
	}
}
