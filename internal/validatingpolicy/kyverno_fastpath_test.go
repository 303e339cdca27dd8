package validatingpolicy_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// kyvernoPodSecurityDir is Kyverno's Pod Security set as ValidatingPolicies.
const kyvernoPodSecurityDir = "../../test/corpus/kyverno-policies/pod-security-vpol"

// TestKyvernoFastPathPlanned fails when one of Kyverno's 16 Pod Security
// ValidatingPolicies, or a policy its autogen derives for Pod
// controllers, is not planned for the fast path, its direct evaluator
// included.
func TestKyvernoFastPathPlanned(t *testing.T) {
	set, err := benchpolicies.KyvernoPodSecurity("../..")
	if err != nil {
		t.Fatal(err)
	}
	policies, autogen := 0, 0
	for _, p := range set.Policies {
		if p.VAP == nil || p.VAP.Kyverno == nil {
			t.Errorf("%s: not a Kyverno policy", p.Name())
			continue
		}
		policies++
		if why := p.VAP.Validator.FastPath(); why != "" || !p.VAP.Validator.Direct() {
			t.Errorf("%s: not on the fast path (%s) or without a direct plan", p.Name(), why)
		}
		for _, a := range p.VAP.Autogen {
			autogen++
			if why := a.Validator.FastPath(); why != "" || !a.Validator.Direct() {
				t.Errorf("%s, autogen %s: not on the fast path (%s) or without a direct plan", p.Name(), a.Policy.Name, why)
			}
		}
	}
	if policies != 16 || autogen == 0 {
		t.Errorf("%d policies, %d autogen policies; want 16, some", policies, autogen)
	}
}

// TestKyvernoFastPathDecidesAsValidator: on every resource of the set's
// own Kyverno tests (Pods, Deployments and CronJobs, good and bad) and
// the captured Pod, each policy decides the same with the fast path as
// on the apiserver's validator alone (--cel-fast-path=false): allowed or
// denied, Kyverno's words, warnings and audit annotations. Failing
// validations must be among them.
func TestKyvernoFastPathDecidesAsValidator(t *testing.T) {
	set, err := benchpolicies.KyvernoPodSecurity("../..")
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]func() *admission.Request{"captured Pod": func() *admission.Request { return review(t, "review-pod-create.json", nil) }}
	resources := map[string]string{"Pod": "pods", "Deployment": "deployments", "CronJob": "cronjobs"}
	files, _ := filepath.Glob(filepath.Join(kyvernoPodSecurityDir, "*", "*", ".kyverno-test", "resource*.yaml.gz"))
	objs, err := manifest.Read(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		res, ok := resources[o.GVK.Kind]
		if !ok {
			continue
		}
		reqs[o.Where()+" "+o.String()] = func() *admission.Request {
			req := review(t, "review-pod-create.json", nil)
			req.Kind = o.GVK
			req.Resource = schema.GroupVersionResource{Group: o.GVK.Group, Version: o.GVK.Version, Resource: res}
			req.SetObjects(withNamespace(t, o.JSON, req.Namespace), nil)
			return req
		}
	}
	if len(reqs) < 100 {
		t.Fatalf("%d requests: the test resources were not found", len(reqs))
	}
	decided, denied := 0, 0
	for name, mk := range reqs {
		for _, p := range set.Policies {
			decide := func(tracked bool) validatingpolicy.Decision {
				rv := admissionpolicy.NewReview(mk())
				rv.TrackedOnly = tracked
				d, err := validatingpolicy.Evaluate(context.Background(), p.VAP, rv, nil, external.Sources{}, time.Now())
				if err != nil {
					t.Fatalf("%s, %s: %v", name, p.Name(), err)
				}
				return d
			}
			got, want := decide(false), decide(true)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s, %s:\n fast path: %s\n validator: %s", name, p.Name(), g, w)
			}
			if want.Matched {
				decided++
				if want.Denial != "" || len(want.Failures) > 0 {
					denied++
				}
			}
		}
	}
	if decided < 500 || denied < 100 {
		t.Errorf("only %d decisions (%d failures): the corpus is too weak", decided, denied)
	}
	t.Logf("%d requests, %d decisions (%d failed validations), all as the validator's", len(reqs), decided, denied)
}
