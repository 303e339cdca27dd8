package gatekeeper

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/open-policy-agent/frameworks/constraint/pkg/apis"
	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The API groups of Gatekeeper's policy objects.
const (
	TemplatesGroup   = "templates.gatekeeper.sh"
	ConstraintsGroup = "constraints.gatekeeper.sh"
	templateKind     = "ConstraintTemplate"
)

// typeMeta is what a document says it is.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func (t typeMeta) group() string {
	for i := range len(t.APIVersion) {
		if t.APIVersion[i] == '/' {
			return t.APIVersion[:i]
		}
	}
	return ""
}

func typeOf(js []byte) typeMeta {
	var t typeMeta
	_ = json.Unmarshal(js, &t)
	return t
}

// IsTemplate tells whether a JSON document is a ConstraintTemplate.
func IsTemplate(js []byte) bool {
	t := typeOf(js)
	return t.group() == TemplatesGroup && t.Kind == templateKind
}

// IsConstraint tells whether a JSON document is a Constraint: an object of
// constraints.gatekeeper.sh, whose kind a template defines.
func IsConstraint(js []byte) bool {
	return typeOf(js).group() == ConstraintsGroup
}

// templateScheme holds every served version of ConstraintTemplate and its
// conversions. It is built once: a Scheme is safe for concurrent reads.
var templateScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("gatekeeper scheme: %w", err)
	}
	return scheme, nil
})

// versionless is what every served version of ConstraintTemplate is.
type versionless interface {
	ToVersionless() (*templates.ConstraintTemplate, error)
}

// DecodeTemplate reads a ConstraintTemplate of any version Gatekeeper
// serves (v1, v1beta1, v1alpha1), strictly, and converts it to the
// framework's versionless form, defaulted as Gatekeeper defaults it.
func DecodeTemplate(js []byte) (*templates.ConstraintTemplate, error) {
	scheme, err := templateScheme()
	if err != nil {
		return nil, err
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("invalid ConstraintTemplate: %w", err)
	}
	obj, err := scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("ConstraintTemplate: apiVersion %s is not one Gatekeeper serves (templates.gatekeeper.sh/v1, v1beta1 or v1alpha1)", u.GetAPIVersion())
	}
	if err := decodeStrict(js, obj); err != nil {
		return nil, fmt.Errorf("invalid ConstraintTemplate: %w", err)
	}
	v, ok := obj.(versionless)
	if !ok {
		return nil, fmt.Errorf("ConstraintTemplate: %T has no versionless form", obj)
	}
	t, err := v.ToVersionless()
	if err != nil {
		return nil, fmt.Errorf("ConstraintTemplate %q: %w", u.GetName(), err)
	}
	return t, nil
}

// DecodeConstraint reads a Constraint. Its parameters are checked against
// its template's schema when it is added to an Evaluator.
func DecodeConstraint(js []byte) (*unstructured.Unstructured, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("invalid Constraint: %w", err)
	}
	if u.GroupVersionKind().Version == "" {
		return nil, fmt.Errorf("constraint %q: apiVersion must be constraints.gatekeeper.sh/v1beta1 (or v1alpha1)", u.GetName())
	}
	return &u, nil
}
