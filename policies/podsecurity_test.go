package policies_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/defaulting"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

var (
	generated = flag.Int("pss.generated", 3000, "how many generated Pods the differential test compares")
	seed      = flag.Uint64("pss.seed", 1, "seed of the generated Pods")
)

// pod is one Pod of the differential corpus.
type pod struct {
	name string
	// obj is the Pod as Pod Security admission sees it: defaulted by the
	// apiserver (json is as written; tollgate defaults it itself).
	obj  *corev1.Pod
	json []byte
}

// defaultedPod is the Pod of js as the apiserver hands it to admission.
func defaultedPod(t testing.TB, name string, js []byte) *corev1.Pod {
	t.Helper()
	out, warnings, err := defaulting.Object(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, js)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("%s: default: %v %q", name, err, warnings)
	}
	var p corev1.Pod
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &p
}

// psaFixtures are the Pods Kubernetes' own Pod Security tests are made of,
// for every level and version (each is decided here at the newest version).
func psaFixtures(t testing.TB) []pod {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("locate k8s.io/pod-security-admission: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "test", "testdata")
	var pods []pod
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		pods = append(pods, readPod(t, "pod-security-admission/"+rel, path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// edgeCases are the hand-written Pods of testdata/pod-security.
func edgeCases(t testing.TB) []pod {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "pod-security", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pods []pod
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			pods = append(pods, podOf(t, fmt.Sprintf("%s#%d", f, i+1), doc))
		}
	}
	return pods
}

func readPod(t testing.TB, name, path string) pod {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return podOf(t, name, data)
}

func podOf(t testing.TB, name string, doc []byte) pod {
	t.Helper()
	var p corev1.Pod
	if err := yaml.UnmarshalStrict(doc, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if p.Name == "" {
		t.Fatalf("%s: a corpus Pod needs a name", name)
	}
	return pod{name: name, obj: defaultedPod(t, name, js), json: js}
}

// verdicts is what one side decided for one Pod: per check, and per level.
type verdicts struct {
	checks map[psa.CheckID]bool
	levels map[api.Level]bool
}

func kubernetes(t testing.TB, eval psa.Evaluator, checks map[psa.CheckID]psa.Check, p *corev1.Pod) verdicts {
	v := verdicts{checks: map[psa.CheckID]bool{}, levels: map[api.Level]bool{}}
	for id, c := range checks {
		v.checks[id] = c.Versions[len(c.Versions)-1].CheckPod(&p.ObjectMeta, &p.Spec).Allowed
	}
	for _, level := range []api.Level{api.LevelBaseline, api.LevelRestricted} {
		lv := api.LevelVersion{Level: level, Version: api.LatestVersion()}
		v.levels[level] = psa.AggregateCheckResults(eval.EvaluatePod(lv, &p.ObjectMeta, &p.Spec)).Allowed
	}
	return v
}

// tollgate decides the Pods through the engine, as tollgate check does: the
// per-control policies one by one, and each set as a whole.
type tollgate struct {
	lib  *library
	all  *engine.Engine
	sets map[api.Level]*engine.Engine
}

func newTollgate(t testing.TB) *tollgate {
	lib := loadLibrary(t)
	tg := &tollgate{lib: lib, all: engine.New(lib.set, engine.Options{}), sets: map[api.Level]*engine.Engine{}}
	for _, level := range []api.Level{api.LevelBaseline, api.LevelRestricted} {
		set, err := policy.LoadPath(filepath.Join("sets", "pod-security-"+string(level)+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tg.sets[level] = engine.New(set, engine.Options{})
	}
	return tg
}

func objects(t testing.TB, name string, js []byte) []*manifest.Object {
	t.Helper()
	objs, err := manifest.Parse(name, js)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %d objects, %v", name, len(objs), err)
	}
	return objs
}

func (tg *tollgate) decide(t testing.TB, name string, js []byte) (verdicts, string) {
	t.Helper()
	ctx := context.Background()
	opts := offline.Options{DefaultNamespace: "corpus", Workers: 1}
	v := verdicts{checks: map[psa.CheckID]bool{}, levels: map[api.Level]bool{}}
	objs := objects(t, name, js)
	f := offline.Run(ctx, tg.all, objs, opts)[0]
	if f.Err != nil {
		t.Fatalf("%s: %v", name, f.Err)
	}
	outcome := map[string]engine.Result{}
	for _, r := range f.Results {
		outcome[r.Policy] = r
	}
	var messages []string
	for id, p := range tg.lib.control {
		r, ok := outcome[p.Name()]
		switch {
		case !ok:
			t.Fatalf("%s: policy %s did not decide", name, p.Name())
		case r.Outcome == engine.Error:
			t.Fatalf("%s: policy %s could not evaluate: %s", name, p.Name(), r.Message)
		}
		v.checks[id] = r.Outcome != engine.Fail
		if r.Outcome == engine.Fail {
			messages = append(messages, r.Message)
		}
	}
	for level, eng := range tg.sets {
		v.levels[level] = offline.Run(ctx, eng, objs, opts)[0].Allowed
	}
	slices.Sort(messages)
	return v, strings.Join(messages, "\n")
}

// compare reports every check and level where tollgate and Kubernetes
// disagree on p, with the Pod and both verdicts.
func compare(t *testing.T, k, g verdicts, p pod, messages string) bool {
	t.Helper()
	var diffs []string
	for id, allowed := range k.checks {
		if g.checks[id] != allowed {
			diffs = append(diffs, fmt.Sprintf("check %s: Kubernetes allowed=%v, tollgate allowed=%v", id, allowed, g.checks[id]))
		}
	}
	for level, allowed := range k.levels {
		if g.levels[level] != allowed {
			diffs = append(diffs, fmt.Sprintf("level %s: Kubernetes allowed=%v, tollgate's set allowed=%v", level, allowed, g.levels[level]))
		}
	}
	if len(diffs) == 0 {
		return true
	}
	slices.Sort(diffs)
	t.Errorf("%s: tollgate and Pod Security disagree:\n  %s\ntollgate said:\n%s\nPod:\n%s", p.name, strings.Join(diffs, "\n  "), messages, p.json)
	return false
}

// TestPodSecurityMatchesKubernetes decides every corpus Pod with the
// library and with k8s.io/pod-security-admission, check by check and level
// by level, and requires the same allow/deny.
func TestPodSecurityMatchesKubernetes(t *testing.T) {
	tg := newTollgate(t)
	checks := latest()
	eval, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	corpora := []struct {
		name string
		pods func(testing.TB) []pod
	}{
		{"pod-security-admission fixtures", psaFixtures},
		{"edge cases", edgeCases},
		{"generated", func(t testing.TB) []pod { return generate(t, *generated, *seed) }},
	}
	// Under the race detector (make unit) every 10th Pod of the large corpora
	// is compared; make pod-security compares them all.
	sample := func(name string, pods []pod) []pod {
		if !raceDetector || name == "edge cases" {
			return pods
		}
		var out []pod
		for i := 0; i < len(pods); i += 10 {
			out = append(out, pods[i])
		}
		return out
	}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			pods := sample(c.name, c.pods(t))
			denied := map[api.Level]int{}
			disagreements := 0
			for _, p := range pods {
				k := kubernetes(t, eval, checks, p.obj)
				g, msgs := tg.decide(t, p.name, p.json)
				if !compare(t, k, g, p, msgs) {
					disagreements++
					if disagreements >= 20 {
						t.Fatal("stopping after 20 disagreements")
					}
				}
				for level, allowed := range k.levels {
					if !allowed {
						denied[level]++
					}
				}
			}
			t.Logf("%d Pods: baseline denies %d, restricted denies %d; %d disagreements",
				len(pods), denied[api.LevelBaseline], denied[api.LevelRestricted], disagreements)
			if len(pods) > 0 && (denied[api.LevelRestricted] == 0 || denied[api.LevelRestricted] == len(pods)) {
				t.Errorf("the corpus does not tell allow from deny: restricted denies %d of %d", denied[api.LevelRestricted], len(pods))
			}
		})
	}
}

// TestPodSecurityPodControllers: a Pod template in any Pod controller is
// decided as the Pod it makes, by each set.
func TestPodSecurityPodControllers(t *testing.T) {
	tg := newTollgate(t)
	eval, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pods := edgeCases(t)
	if !raceDetector {
		pods = append(pods, generate(t, 200, *seed+1)...)
	}
	for _, gr := range policy.PodControllers {
		t.Run(gr.String(), func(t *testing.T) {
			for _, p := range pods {
				js := wrap(t, gr, p)
				for level, eng := range tg.sets {
					lv := api.LevelVersion{Level: level, Version: api.LatestVersion()}
					want := psa.AggregateCheckResults(eval.EvaluatePod(lv, &p.obj.ObjectMeta, &p.obj.Spec)).Allowed
					f := offline.Run(context.Background(), eng, objects(t, p.name, js), offline.Options{DefaultNamespace: "corpus", Workers: 1})[0]
					if f.Err != nil || f.Allowed != want {
						t.Errorf("%s in a %s, %s: Kubernetes allowed=%v, tollgate allowed=%v (%v %s)\n%s", p.name, gr, level, want, f.Allowed, f.Err, f.Message, js)
					}
				}
			}
		})
	}
}

// wrap puts p's metadata and spec into the Pod template of a controller.
func wrap(t testing.TB, gr schema.GroupResource, p pod) []byte {
	t.Helper()
	tmpl := map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": "corpus"}, "annotations": p.obj.Annotations}, "spec": p.obj.Spec}
	spec := map[string]any{"selector": map[string]any{"matchLabels": map[string]string{"app": "corpus"}}, "template": tmpl}
	apiVersion := gr.Group + "/v1"
	kind := map[string]string{
		"deployments": "Deployment", "replicasets": "ReplicaSet", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet",
		"jobs": "Job", "cronjobs": "CronJob", "replicationcontrollers": "ReplicationController",
	}[gr.Resource]
	switch gr.Resource {
	case "jobs":
		spec = map[string]any{"template": tmpl}
	case "cronjobs":
		spec = map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl}}}
	case "replicationcontrollers":
		apiVersion = "v1"
		spec = map[string]any{"selector": map[string]string{"app": "corpus"}, "template": tmpl}
	}
	if kind == "" {
		t.Fatalf("no kind for pod controller %s", gr)
	}
	js, err := yaml.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": p.obj.Name}, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.YAMLToJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
