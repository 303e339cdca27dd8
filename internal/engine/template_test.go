package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// TestTemplateFromJSON: the Pod template built from the controller's bytes
// (templateFromJSON) is the one podOf builds from the decoded controller
// (templateDecoded), for captured-Pod-based Deployments, CronJobs and the
// other controllers, privileged variants, and edge cases of shape
// (repeated and escaped names, missing or odd metadata, labels, names):
// the same error, the same labels, the same decoded objects, and every
// library and engine test policy's outcome the same. Where the bytes
// cannot give podOf's Pod (the template's spec missing or no object), it
// gives nothing and the decoded path decides.
func TestTemplateFromJSON(t *testing.T) {
	progs := templatePrograms(t)
	pod := capturedPodObject(t)
	spec, _ := json.Marshal(pod["spec"])
	meta, _ := json.Marshal(map[string]any{"labels": pod["metadata"].(map[string]any)["labels"],
		"annotations": pod["metadata"].(map[string]any)["annotations"]})
	priv := privilegedSpec(t, pod["spec"])
	deploy := func(spec, meta string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"checkout","namespace":"shop","labels":{"a":"b"}},` +
			`"spec":{"replicas":3,"template":{"metadata":` + meta + `,"spec":` + spec + `}}}`
	}
	cron := `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly","namespace":"shop"},"spec":{"schedule":"* * * * *",` +
		`"jobTemplate":{"spec":{"template":{"metadata":` + string(meta) + `,"spec":` + string(spec) + `}}}}}`
	type tc struct {
		name     string
		obj, old string
		fallback bool
	}
	cases := []tc{
		{name: "deployment", obj: deploy(string(spec), string(meta))},
		{name: "privileged deployment", obj: deploy(priv, string(meta))},
		{name: "cronjob", obj: cron},
		{name: "privileged cronjob", obj: strings.Replace(cron, string(spec), priv, 1)},
		{name: "update", obj: deploy(priv, string(meta)), old: deploy(string(spec), string(meta))},
		{name: "update, old without template", obj: deploy(string(spec), string(meta)), old: `{"kind":"Deployment","spec":{}}`},
		{name: "delete", old: deploy(priv, string(meta))},
		{name: "no spec", obj: `{"kind":"Deployment","metadata":{"name":"x"}}`},
		{name: "no template", obj: `{"kind":"Deployment","spec":{"replicas":1}}`},
		{name: "template a string", obj: `{"kind":"Deployment","spec":{"template":"x"}}`},
		{name: "template null", obj: `{"kind":"Deployment","spec":{"template":null}}`},
		{name: "spec a list", obj: `{"kind":"Deployment","spec":[{"template":{}}]}`},
		{name: "cronjob without jobTemplate", obj: `{"kind":"CronJob","spec":{"template":{"spec":{}}}}`},
		{name: "template without spec", obj: `{"kind":"Deployment","spec":{"template":{"metadata":{}}}}`, fallback: true},
		{name: "template spec null", obj: deploy("null", "{}"), fallback: true},
		{name: "old template spec null", obj: deploy(priv, "{}"), old: deploy("null", "{}"), fallback: true},
		{name: "empty template", obj: `{"kind":"Deployment","spec":{"template":{"spec":{}}}}`},
		{name: "metadata missing", obj: `{"kind":"Deployment","spec":{"template":{"spec":` + priv + `}}}`},
		{name: "metadata a string", obj: deploy(priv, `"m"`)},
		{name: "metadata null", obj: deploy(priv, `null`)},
		{name: "template names", obj: deploy(priv, `{"name":"t","namespace":"other","generateName":"g-","labels":{"x":"y"},"name":"u"}`)},
		{name: "escaped names", obj: deploy(priv, `{"n\u0061me":"t","labels":{"x":"y"}}`)},
		{name: "labels not strings", obj: deploy(priv, `{"labels":{"x":1,"y":"z"}}`)},
		{name: "labels null", obj: deploy(priv, `{"labels":null}`)},
		{name: "labels empty", obj: deploy(priv, `{"labels":{}}`)},
		{name: "labels repeated", obj: deploy(priv, `{"labels":{"x":"1"},"labels":{"x":"2","y":"3"}}`)},
		{name: "controller name a number", obj: `{"kind":"Deployment","metadata":{"name":7,"namespace":null},"spec":{"template":{"spec":` + priv + `}}}`},
		{name: "controller metadata repeated", obj: `{"kind":"Deployment","metadata":{"name":"a"},"metadata":{"name":"b\"\u00e9"},"spec":{"template":{"spec":{}}}}`},
		{name: "kind repeated", obj: `{"kind":"CronJob","kind":"Deployment","spec":{"template":{"spec":` + priv + `}}}`},
		{name: "kind escaped", obj: `{"kind":"Cron\u004aob","spec":{"jobTemplate":{"spec":{"template":{"spec":` + priv + `}}}}}`},
		{name: "spec repeated", obj: `{"kind":"Deployment","spec":{"template":{"spec":{}}},"spec":{"template":{"spec":` + priv + `}}}`},
		{name: "template spec repeated", obj: `{"kind":"Deployment","spec":{"template":{"spec":` + priv + `,"spec":{"containers":[]}}}}`},
		{name: "escaped keys", obj: `{"\u006bind":"Deployment","\u0073pec":{"templat\u0065":{"spe\u0063":` + priv + `}}}`},
		{name: "spaces", obj: " {\n \"kind\" : \"Deployment\" ,\n \"metadata\" : { \"name\" : \"s\" } ,\n \"spec\" : { \"template\" : { \"metadata\" : { \"labels\" : { \"a\" : \"b\" } } , \"spec\" : { \"containers\" : [ { \"name\" : \"c\" , \"image\" : \"nginx\" } ] } } } } "},
	}
	for _, kind := range []string{"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"} {
		cases = append(cases, tc{name: kind, obj: strings.Replace(deploy(priv, string(meta)), `"Deployment"`, `"`+kind+`"`, 1)})
	}
	decisions := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fromJSON, errJSON := templateFromJSON(controllerInput(t, c.obj, c.old))
			decoded, errDecoded := templateDecoded(controllerInput(t, c.obj, c.old))
			if fromJSON == nil && errJSON == nil {
				if !c.fallback {
					t.Fatal("the bytes give no template")
				}
				return
			}
			if c.fallback {
				t.Fatalf("the bytes give a template (%v), want the decoded path", errJSON)
			}
			if fmt.Sprint(errJSON) != fmt.Sprint(errDecoded) {
				t.Fatalf("error %v, decoded %v", errJSON, errDecoded)
			}
			if errJSON != nil {
				decisions["error"]++
				return
			}
			if !reflect.DeepEqual(fromJSON.labels, decoded.labels) || (fromJSON.labels == nil) != (decoded.labels == nil) {
				t.Errorf("labels %#v, decoded %#v", fromJSON.labels, decoded.labels)
			}
			o1, old1, err1 := fromJSON.celInput.Objects()
			o2, old2, err2 := decoded.celInput.Objects()
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(old1, old2) || err1 != nil || err2 != nil {
				t.Fatalf("objects %v, %v, %v; decoded %v, %v, %v", o1, old1, err1, o2, old2, err2)
			}
			for _, p := range progs {
				got := p.Program.Evaluate(context.Background(), fromJSON.celInput)
				want := p.Program.Evaluate(context.Background(), decoded.celInput)
				if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
					t.Errorf("%s: %s, decoded %s", p.Name, g, w)
				}
				switch {
				case got.Err != nil:
					decisions["evaluation error"]++
				case len(got.Violations) > 0:
					decisions["denied"]++
				case got.Skipped:
					decisions["skipped"]++
				default:
					decisions["admitted"]++
				}
			}
		})
	}
	t.Logf("%d programs, decisions %v", len(progs), decisions)
	for _, d := range []string{"error", "denied", "admitted"} {
		if decisions[d] == 0 {
			t.Errorf("no case %s", d)
		}
	}
}

// controllerInput is the checked CEL input of a Deployment review with obj
// and old (JSON, "" for none) as its objects.
func controllerInput(t *testing.T, obj, old string) *cel.Input {
	t.Helper()
	req := &admission.Request{UID: "u", Operation: admission.Create, Resource: deploymentsGVR,
		Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "shop", Name: "checkout"}
	var o, ol []byte
	if obj != "" {
		o = []byte(obj)
	}
	if old != "" {
		ol = []byte(old)
		req.Operation = admission.Update
	}
	if obj == "" {
		req.Operation = admission.Delete
	}
	req.SetObjects(o, ol)
	ci, err := (&input{}).cel(req, &corev1.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

// templatePrograms are the CEL programs of the library and of the engine
// tests' policies.
func templatePrograms(t *testing.T) []benchpolicies.Program {
	t.Helper()
	out, err := benchpolicies.Programs("../../policies", "testdata/cel-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 25 {
		t.Fatalf("only %d programs", len(out))
	}
	return out
}

// capturedPodObject is the captured Pod, decoded.
func capturedPodObject(t *testing.T) map[string]any {
	t.Helper()
	var pod map[string]any
	if err := json.Unmarshal(capturedPod(t).Object(), &pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// privilegedSpec is spec with its first container privileged, on the
// host's network, with an unpinned image and a host path volume.
func privilegedSpec(t *testing.T, spec any) string {
	t.Helper()
	b, _ := json.Marshal(spec)
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	c := s["containers"].([]any)[0].(map[string]any)
	c["securityContext"] = map[string]any{"privileged": true, "allowPrivilegeEscalation": true, "runAsUser": 0}
	c["image"] = "nginx:latest"
	s["hostNetwork"] = true
	s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": "h", "hostPath": map[string]any{"path": "/"}})
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// FuzzTemplateFromJSON: on any valid JSON object as the controller (and
// the same as the old one), the template built from the bytes has the
// decoded path's error, labels and objects, or defers to it.
func FuzzTemplateFromJSON(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Deployment","metadata":{"name":"a"},"spec":{"template":{"metadata":{"labels":{"x":"y"},"name":"t"},"spec":{"containers":[]}}}}`,
		`{"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"spec":{}}}}}}`,
		`{"kind":"Cron\u004aob","kind":"CronJob","spec":{"template":{"spec":{}}},"spec":{"jobTemplate":{"spec":{"template":{"metadata":null,"spec":{"a":1}}}}}}`,
		`{"spec":{"template":{"metadata":{"labels":{"x":1}},"spec":null}}}`,
		`{"metadata":{"name":7,"namespace":"n"},"spec":{"template":{"metadata":{"n\u0061me":"x","labels":{},"labels":{"a":"b"}},"spec":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 4096 || !json.Valid(doc) {
			return
		}
		if _, err := cel.ObjectFromJSON(doc); err != nil {
			return
		}
		obj := string(doc)
		fromJSON, errJSON := templateFromJSON(controllerInput(t, obj, obj))
		decoded, errDecoded := templateDecoded(controllerInput(t, obj, obj))
		if fromJSON == nil && errJSON == nil {
			return // the decoded path decides
		}
		if fmt.Sprint(errJSON) != fmt.Sprint(errDecoded) {
			t.Fatalf("%s: error %v, decoded %v", doc, errJSON, errDecoded)
		}
		if errJSON != nil {
			return
		}
		if !reflect.DeepEqual(fromJSON.labels, decoded.labels) || (fromJSON.labels == nil) != (decoded.labels == nil) {
			t.Fatalf("%s: labels %#v, decoded %#v", doc, fromJSON.labels, decoded.labels)
		}
		o1, old1, err1 := fromJSON.celInput.Objects()
		o2, old2, err2 := decoded.celInput.Objects()
		if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(old1, old2) || err1 != nil || err2 != nil {
			t.Fatalf("%s: objects %v, %v, %v; decoded %v, %v, %v", doc, o1, old1, err1, o2, old2, err2)
		}
	})
}
