package validatingpolicy_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// kubescapeDir is Kubescape's published VAP library in the corpus.
const kubescapeDir = "../../test/corpus/kubescape-cel-admission-library"

// TestFastPathPlanned fails when a policy of Kubescape's library that
// the fast path can decide is not planned for it: all but those with
// params (which the fast path does not bind yet).
func TestFastPathPlanned(t *testing.T) {
	set, err := benchpolicies.KubescapePods("../..", true)
	if err != nil {
		t.Fatal(err)
	}
	planned, params := 0, 0
	for _, p := range set.Policies {
		if p.VAP == nil {
			continue
		}
		why := p.VAP.Validator.FastPath()
		switch {
		case why == "":
			planned++
		case why == "params" && p.VAP.Policy.Spec.ParamKind != nil:
			params++
		default:
			t.Errorf("%s: not on the fast path: %s", p.Name(), why)
		}
	}
	if planned != 37 || params != 14 {
		t.Errorf("%d planned, %d with params; want 37, 14", planned, params)
	}
}

// TestFastPathDecidesAsValidator: on every workload of Kubescape's own
// test resources, and the captured Pod, each policy of the library
// decides the same with the fast path as on the apiserver's validator
// alone (--cel-fast-path=false): allowed or denied, the same words,
// warnings and audit annotations. The fast path must decide some of
// them, denials among them.
func TestFastPathDecidesAsValidator(t *testing.T) {
	set, err := benchpolicies.KubescapePods("../..", true)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := benchpolicies.Params(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]func() *admission.Request{"captured Pod": func() *admission.Request { return review(t, "review-pod-create.json", nil) }}
	resources := map[string]string{"Pod": "pods", "Deployment": "deployments", "DaemonSet": "daemonsets", "StatefulSet": "statefulsets",
		"ReplicaSet": "replicasets", "Job": "jobs", "CronJob": "cronjobs"}
	files, _ := filepath.Glob(filepath.Join(kubescapeDir, "test-resources", "*.yaml.gz"))
	for _, f := range files {
		data := gunzipFile(t, f)
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ APIVersion, Kind string }
		_ = json.Unmarshal(js, &meta)
		res, ok := resources[meta.Kind]
		if !ok {
			continue
		}
		gv, _ := schema.ParseGroupVersion(meta.APIVersion)
		reqs[filepath.Base(f)] = func() *admission.Request {
			req := review(t, "review-pod-create.json", nil)
			req.Kind = gv.WithKind(meta.Kind)
			req.Resource = gv.WithResource(res)
			req.SetObjects(withNamespace(t, js, req.Namespace), nil)
			return req
		}
	}
	if len(reqs) < 10 {
		t.Fatalf("%d requests: the test resources were not found", len(reqs))
	}
	fast, denied := 0, 0
	for name, mk := range reqs {
		for _, p := range set.Policies {
			if p.VAP == nil {
				continue
			}
			decide := func(tracked bool) validatingpolicy.Decision {
				rv := admissionpolicy.NewReview(mk())
				rv.TrackedOnly = tracked
				d, err := validatingpolicy.Evaluate(context.Background(), p.VAP, rv, nil, ext, time.Now())
				if err != nil {
					t.Fatalf("%s, %s: %v", name, p.Name(), err)
				}
				return d
			}
			got, want := decide(false), decide(true)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s:\n fast path: %+v\n validator: %+v", name, p.Name(), got, want)
			}
			if p.VAP.Validator.FastPath() == "" && want.Matched {
				fast++
				if want.Denial != "" {
					denied++
				}
			}
		}
	}
	if fast < 100 || denied < 10 {
		t.Errorf("only %d decisions of planned policies (%d denials): the corpus is too weak", fast, denied)
	}
	t.Logf("%d requests, %d decisions of policies planned for the fast path (%d denials), all as the validator's", len(reqs), fast, denied)
}

func gunzipFile(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withNamespace is the object js in namespace ns, as the apiserver sends it.
func withNamespace(t *testing.T, js []byte, ns string) []byte {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal(js, &o); err != nil {
		t.Fatal(err)
	}
	m, _ := o["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		o["metadata"] = m
	}
	m["namespace"] = ns
	out, _ := json.Marshal(o)
	return out
}
