package suite

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kyvernoContext is a cli.kyverno.io/v1alpha1 Context, Kyverno's CLI's
// stand-in for the cluster (its cmd/cli/kubectl-kyverno/apis/v1alpha1/
// context.go): the objects its resource library reads. Image data, which
// only Kyverno's image libraries read, is refused.
type kyvernoContext struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		Resources []map[string]any `json:"resources"`
		Images    []any            `json:"images"`
	} `json:"spec"`
}

// readKyvernoContext reads a test's context file: the objects a policy's
// resource.Get and resource.List read, and nothing else (Kyverno's test
// does not read the resources under test through them).
func readKyvernoContext(file string) ([]*unstructured.Unstructured, error) {
	var c kyvernoContext
	if err := readStrict(file, &c); err != nil {
		return nil, err
	}
	if c.APIVersion != kyvernoAPIVersion || c.Kind != "Context" {
		return nil, fmt.Errorf("%s: want apiVersion %s and kind Context", file, kyvernoAPIVersion)
	}
	if len(c.Spec.Images) > 0 {
		return nil, fmt.Errorf("%s: spec.images: not supported by tollgate test (tollgate has none of Kyverno's image libraries)", file)
	}
	out := make([]*unstructured.Unstructured, len(c.Spec.Resources))
	for i, r := range c.Spec.Resources {
		u := &unstructured.Unstructured{Object: r}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: spec.resources[%d]: give its apiVersion, kind and metadata.name", file, i)
		}
		out[i] = u
	}
	return out, nil
}
