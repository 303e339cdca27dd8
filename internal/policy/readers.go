package policy

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// A reader reads one dialect of policy: the documents of its API group.
type reader struct {
	// group is the API group of the dialect's documents.
	group string
	// identify returns the document's kind and its decoder, or nil when the
	// document is not of this dialect.
	identify func(js []byte) (kind string, decode func() (*Policy, field.ErrorList))
}

// readers is every dialect tollgate reads besides its own (tollgate.dev,
// decoded by decode), and Gatekeeper's groups it refuses. A document of
// another API group is an object (foreign), never a policy.
var readers = append([]reader{
	{group: "admissionregistration.k8s.io", identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if kind, ok := validatingpolicy.Identify(js); ok {
			return kind, func() (*Policy, field.ErrorList) { return decodeVAP(kind, js) }
		}
		if kind, version, ok := mutatingpolicy.Identify(js); ok {
			return kind, func() (*Policy, field.ErrorList) { return decodeMAP(kind, version, js) }
		}
		return "", nil
	}},
	{group: kyverno.Group, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if kind, version, ok := kyverno.Identify(js); ok {
			return kind, func() (*Policy, field.ErrorList) { return decodeKyverno(kind, version, js) }
		}
		return "", nil
	}},
	{group: gatekeeper.TemplatesGroup, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if gatekeeper.IsTemplate(js) {
			return "ConstraintTemplate", func() (*Policy, field.ErrorList) { return decodeGatekeeperTemplate(js) }
		}
		return "", nil
	}},
	{group: gatekeeper.ConstraintsGroup, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if gatekeeper.IsConstraint(js) {
			return "Constraint", func() (*Policy, field.ErrorList) { return decodeGatekeeperConstraint(js) }
		}
		return "", nil
	}},
	{group: gatekeeper.SyncSetGroup, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if gatekeeper.IsSyncSet(js) {
			return "SyncSet", func() (*Policy, field.ErrorList) { return decodeGatekeeperSyncSet(js) }
		}
		return "", nil
	}},
	{group: gatekeeper.ConfigGroup, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
		if gatekeeper.IsConfig(js) {
			return "Config", func() (*Policy, field.ErrorList) { return decodeGatekeeperConfig(js) }
		}
		return "", nil
	}},
}, refusedGatekeeper()...)

// refusedGatekeeper reads Gatekeeper's API groups tollgate does not read
// yet: each of their documents is refused by name. A mutation silently
// left out would change what is enforced.
func refusedGatekeeper() []reader {
	var out []reader
	for _, g := range []struct{ group, what string }{
		{"mutations.gatekeeper.sh", "Gatekeeper's mutators"},
		{"expansion.gatekeeper.sh", "Gatekeeper's ExpansionTemplates"},
		{"externaldata.gatekeeper.sh", "Gatekeeper's external data providers"},
	} {
		out = append(out, reader{group: g.group, identify: func(js []byte) (string, func() (*Policy, field.ErrorList)) {
			var tm metav1.TypeMeta
			if json.Unmarshal(js, &tm) != nil || tm.Kind == "" {
				return "", nil
			}
			if gv, err := schema.ParseGroupVersion(tm.APIVersion); err != nil || gv.Group != g.group {
				return "", nil
			}
			return tm.Kind, func() (*Policy, field.ErrorList) {
				return nil, field.ErrorList{field.Forbidden(field.NewPath("apiVersion"), g.what+" are not supported by tollgate yet; take the document out, or run it with Gatekeeper")}
			}
		}})
	}
	return out
}

// tollgateGroup is the API group of tollgate's own policies (APIVersion).
const tollgateGroup = "tollgate.dev"

// readerOf returns the decoder of a document one of the readers reads, and
// its kind; nil for any other document.
func readerOf(js []byte) (string, func() (*Policy, field.ErrorList)) {
	for _, r := range readers {
		if kind, decode := r.identify(js); decode != nil {
			return kind, decode
		}
	}
	return "", nil
}

// policyGroup tells whether group holds policies: tollgate's or a reader's.
func policyGroup(group string) bool {
	if group == tollgateGroup {
		return true
	}
	for _, r := range readers {
		if r.group == group {
			return true
		}
	}
	return false
}

// foreign returns a document of an API group no reader reads as an object;
// nil for documents that are, or may be, policies.
func foreign(js []byte) *unstructured.Unstructured {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil || tm.APIVersion == "" || tm.Kind == "" {
		return nil
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || policyGroup(gv.Group) {
		return nil
	}
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON(js); err != nil {
		return nil
	}
	return o
}
