package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

const deepPolicy = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: deep}
spec:
  match:
    resources: [widgets.example.com]
  validate:
    expressions:
    - expression: "object.metadata.name == 'w' && has(object.spec.a.a)"
    - expression: "object.spec.a.a.a.a == object.spec.a.a.a"
      messageExpression: "'deep ' + string(size(object.spec.a))"
`

// TestDeepReviews: a review whose object nests deeper than fastjson reads
// (300 levels), up to the apiserver's own limit (10,000, encoding/json's,
// which the review carries two levels down), is answered through the
// webhook handler with the apiserver's validator's decision on the object
// as the apiserver decodes it; one nested past that limit, which the
// apiserver never sends, is refused as a bad review.
func TestDeepReviews(t *testing.T) {
	ps, err := policy.Parse("deep.yaml", []byte(deepPolicy))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(set, engine.Options{})
	srv := httptest.NewServer(New(e.Handler(set.Groups[0]), Options{Logger: quiet()}))
	defer srv.Close()
	ref, errs := cel.Compile(cel.Spec{Name: "deep", Validations: []cel.Validation{
		{Expression: "object.metadata.name == 'w' && has(object.spec.a.a)"},
		{Expression: "object.spec.a.a.a.a == object.spec.a.a.a", MessageExpression: "'deep ' + string(size(object.spec.a))"},
	}}, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, levels := range []int{299, 300, 301, 10000, 10001} {
		n := levels - 1 // the object, then spec's
		obj := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"shop"},"spec":` +
			strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n) + `}`
		body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE",` +
			`"kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},` +
			`"name":"w","namespace":"shop","userInfo":{"username":"alice"},"object":` + obj + `}}`
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		if err := utiljson.Unmarshal([]byte(obj), &m); err != nil {
			// Past the apiserver's limit: no review carries it.
			if levels <= 10000 || resp.StatusCode != 400 {
				t.Errorf("%d levels: the apiserver's decoder refuses (%v); tollgate answered %d %.200s", levels, err, resp.StatusCode, out)
			}
			continue
		}
		want := ref.EvaluateTracked(context.Background(), &cel.Input{Object: &unstructured.Unstructured{Object: m},
			Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
			Name: "w", Namespace: "shop", Operation: "CREATE"})
		if want.Err != nil || len(want.Violations) != 1 {
			t.Fatalf("%d levels: the validator says %+v, want one denial", levels, want)
		}
		var review struct {
			Response struct {
				Allowed bool `json:"allowed"`
				Status  struct {
					Message string `json:"message"`
				} `json:"status"`
			} `json:"response"`
		}
		if err := json.Unmarshal(out, &review); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d levels: %d %.300s (%v)", levels, resp.StatusCode, out, err)
		}
		if review.Response.Allowed || !strings.Contains(review.Response.Status.Message, want.Violations[0].Message) {
			t.Errorf("%d levels: tollgate answered %+v, want a denial saying %q", levels, review.Response, want.Violations[0].Message)
		}
	}
}
