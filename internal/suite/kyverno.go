package suite

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
)

// KyvernoFileName is how Kyverno names its suites (kyverno test's default
// --file-name): tollgate test runs them as they are.
const KyvernoFileName = "kyverno-test.yaml"

// kyvernoAPIVersion is the apiVersion of Kyverno's Test, Values and
// UserInfo files.
const kyvernoAPIVersion = "cli.kyverno.io/v1alpha1"

// kyvernoTest is a cli.kyverno.io/v1alpha1 Test, every field Kyverno's
// CLI knows (its cmd/cli/kubectl-kyverno/apis/v1alpha1/test.go), so that
// one tollgate cannot honour is refused by name rather than as unknown.
type kyvernoTest struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Name            string            `json:"name"` // Kyverno's deprecated metadata.name
	Policies        []string          `json:"policies"`
	Resources       []string          `json:"resources"`
	Exceptions      []string          `json:"exceptions"`
	ParamResources  []string          `json:"paramResources"`
	Variables       string            `json:"variables"`
	Values          *kyvernoValues    `json:"values"`
	UserInfo        string            `json:"userinfo"`
	Results         []kyvernoResult   `json:"results"`
	// Context is a file of the objects the policies' resource.Get and
	// resource.List read (kyverno_context.go).
	Context string `json:"context"`

	// Not supported: each is refused with its name (unsupportedFields).
	JSONPayload          any `json:"jsonPayload"`
	JSONPayloads         any `json:"jsonPayloads"`
	HTTPPayloads         any `json:"httpPayloads"`
	EnvoyPayloads        any `json:"envoyPayloads"`
	TargetResources      any `json:"targetResources"`
	ClusterResources     any `json:"clusterResources"`
	APICallResponses     any `json:"apiCallResponses"`
	GlobalContextEntries any `json:"globalContextEntries"`
}

// kyvernoResult is one expectation of a Kyverno Test.
type kyvernoResult struct {
	// Policy is [namespace/]name; Kyverno matches the name alone.
	Policy string `json:"policy"`
	// Rule names a rule of a ClusterPolicy; Kyverno ignores it for the
	// rule-less kinds (ValidatingPolicy, ValidatingAdmissionPolicy, ...),
	// which are all tollgate loads.
	Rule      string         `json:"rule"`
	Kind      string         `json:"kind"`
	Resources []string       `json:"resources"`
	Result    engine.Outcome `json:"result"`
	// Operation is CREATE, UPDATE or DELETE; else the values' request.operation, else CREATE.
	Operation string `json:"operation"`

	// What kind of policy the expectation is about: informative, as in Kyverno.
	IsValidatingAdmissionPolicy bool `json:"isValidatingAdmissionPolicy"`
	IsMutatingAdmissionPolicy   bool `json:"isMutatingAdmissionPolicy"`
	IsValidatingPolicy          bool `json:"isValidatingPolicy"`
	IsDeletingPolicy            bool `json:"isDeletingPolicy"`
	IsImageValidatingPolicy     bool `json:"isImageValidatingPolicy"`
	IsGeneratingPolicy          bool `json:"isGeneratingPolicy"`
	IsMutatingPolicy            bool `json:"isMutatingPolicy"`

	// Not supported: refused with their names.
	ResourceSpecs          any  `json:"resourceSpecs"`
	PatchedResources       any  `json:"patchedResources"`
	GeneratedResource      any  `json:"generatedResource"`
	GeneratedResources     any  `json:"generatedResources"`
	CloneSourceResource    any  `json:"cloneSourceResource"`
	FailOnMissingResources bool `json:"failOnMissingResources"`
}

// kyvernoSuite is what a Kyverno Test adds to a Suite: its expectations,
// read as Kyverno reads them, and the operation of each.
type kyvernoSuite struct {
	results []kyvernoResult
	// exceptions are PolicyException files, relative to the suite.
	exceptions []string
	// operations are the values' request.operation: by policy and
	// resource name, and for every other ("" key).
	operations map[string]admission.Operation
	// annotations are the values' namespaces' annotations.
	annotations map[string]map[string]string
	// context are the objects of the test's context file: all the
	// policies' resource.Get and resource.List read.
	context []*unstructured.Unstructured
}

// loadKyverno reads a Kyverno Test (its JSON) into a Suite, refusing each
// field and value tollgate cannot honour, by name.
func loadKyverno(file string, js []byte) (*Suite, error) {
	var kt kyvernoTest
	strict, err := sigsjson.UnmarshalStrict(js, &kt, sigsjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, err
	}
	if kt.Kind != "Test" {
		return nil, fmt.Errorf("kind %q: want Test", kt.Kind)
	}
	if err := kt.unsupported(); err != nil {
		return nil, err
	}
	if len(kt.Policies) == 0 || len(kt.Resources) == 0 || len(kt.Results) == 0 {
		return nil, errors.New("a test needs policies, resources and results")
	}
	s := &Suite{APIVersion: kt.APIVersion, Kind: kt.Kind, Policies: kt.Policies, Resources: kt.Resources, Params: kt.ParamResources, file: file}
	s.Metadata.Name = kt.Metadata.Name
	k := &kyvernoSuite{results: kt.Results, exceptions: kt.Exceptions, operations: map[string]admission.Operation{}, annotations: map[string]map[string]string{}}
	for i, r := range kt.Results {
		if !slices.Contains([]engine.Outcome{engine.Pass, engine.Fail, engine.Skip, engine.Error}, r.Result) {
			return nil, fmt.Errorf("results[%d].result %q: want pass, fail, skip or error (Kyverno's test reports a failed validation as fail whatever its validationActions)", i, r.Result)
		}
		if r.Kind == "" || len(r.Resources) == 0 {
			return nil, fmt.Errorf("results[%d]: give the kind and the resources (by [namespace/]name)", i)
		}
		if r.Operation != "" && !validOperation(r.Operation) {
			return nil, fmt.Errorf("results[%d].operation %q: want CREATE, UPDATE or DELETE", i, r.Operation)
		}
	}
	values := kt.Values
	if kt.Variables != "" {
		if values != nil {
			return nil, errors.New("give values inline or in variables, not both")
		}
		if values, err = readKyvernoValues(s.rel(kt.Variables)); err != nil {
			return nil, fmt.Errorf("variables: %w", err)
		}
	}
	if values != nil {
		if s.Namespaces, err = values.apply(k.operations, k.annotations); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
	}
	if kt.UserInfo != "" {
		if s.User, s.uid, s.Groups, err = readKyvernoUserInfo(s.rel(kt.UserInfo)); err != nil {
			return nil, fmt.Errorf("userinfo: %w", err)
		}
	}
	if kt.Context != "" {
		if k.context, err = readKyvernoContext(s.rel(kt.Context)); err != nil {
			return nil, fmt.Errorf("context: %w", err)
		}
	}
	s.kyverno = k
	return s, nil
}

// unsupported names the first field of the test that tollgate cannot honour.
func (kt *kyvernoTest) unsupported() error {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"jsonPayload", kt.JSONPayload != nil},
		{"jsonPayloads", kt.JSONPayloads != nil},
		{"httpPayloads", kt.HTTPPayloads != nil},
		{"envoyPayloads", kt.EnvoyPayloads != nil},
		{"targetResources", kt.TargetResources != nil},
		{"clusterResources", kt.ClusterResources != nil},
		{"apiCallResponses", kt.APICallResponses != nil},
		{"globalContextEntries", kt.GlobalContextEntries != nil},
	} {
		if f.set {
			return fmt.Errorf("%s: not supported by tollgate test", f.name)
		}
	}
	for i, r := range kt.Results {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"resourceSpecs", r.ResourceSpecs != nil},
			{"patchedResources", r.PatchedResources != nil},
			{"generatedResource", r.GeneratedResource != nil},
			{"generatedResources", r.GeneratedResources != nil},
			{"cloneSourceResource", r.CloneSourceResource != nil},
			{"failOnMissingResources", r.FailOnMissingResources},
		} {
			if f.set {
				return fmt.Errorf("results[%d].%s: not supported by tollgate test", i, f.name)
			}
		}
	}
	return nil
}

func validOperation(op string) bool {
	return slices.Contains([]admission.Operation{admission.Create, admission.Update, admission.Delete}, admission.Operation(op))
}

// operation is the request's operation for one expectation and resource,
// as Kyverno picks it: the result's own, else the values' for the policy
// and resource, else the values' global one, else CREATE.
func (k *kyvernoSuite) operation(r kyvernoResult, resource string) admission.Operation {
	if r.Operation != "" {
		return admission.Operation(r.Operation)
	}
	_, name, ok := strings.Cut(resource, "/")
	if !ok {
		name = resource
	}
	if op, ok := k.operations[policyName(r.Policy)+"/"+name]; ok {
		return op
	}
	if op, ok := k.operations[""]; ok {
		return op
	}
	return admission.Create
}

// policyName is the name of a policy given as [namespace/]name.
func policyName(p string) string {
	return p[strings.LastIndex(p, "/")+1:]
}
