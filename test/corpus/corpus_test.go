// Package corpus checks public install manifests that nobody here wrote with
// tollgate check, as a user runs it, and compares every workload's verdict
// with Kubernetes' own Pod Security evaluator.
//
// Each folder is one project: its files stored gzipped under their path in
// the project's repository, its LICENSE (and NOTICE), and a SOURCE file that
// names the repository, the revision and commit, and each file's git blob id
// (add.sh writes them). The tests unpack the files into a temporary directory,
// check each blob id, and run `tollgate check -o json` on them.
package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	psadmission "k8s.io/pod-security-admission/admission"
	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"

	"github.com/tollgate-dev/tollgate/internal/cli"
	"github.com/tollgate-dev/tollgate/internal/defaulting"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// controlLabel ties a library policy to the Pod Security check it
// implements (policies/podsecurity_test.go keeps every check covered once).
const controlLabel = "pod-security.tollgate.dev/control"

// levels are the ready-made Pod Security sets of policies/sets.
var levels = []api.Level{api.LevelBaseline, api.LevelRestricted}

// runs are the check runs over the corpus: paths are under the unpacked
// corpus. Argo CD's two variants are also checked in one run, where every
// namespaced object of one has a namesake in the other.
var runs = []struct {
	name  string
	paths []string
}{
	{"argo-cd", []string{"argo-cd/manifests/install.yaml"}},
	{"argo-cd-ha", []string{"argo-cd/manifests/ha/install.yaml"}},
	{"argo-cd-both", []string{"argo-cd/manifests/install.yaml", "argo-cd/manifests/ha/install.yaml"}},
	{"kube-prometheus", []string{"kube-prometheus/manifests"}},
	{"ingress-nginx", []string{"ingress-nginx/deploy/static/provider/cloud/deploy.yaml"}},
	{"flannel", []string{"flannel/Documentation/kube-flannel.yml"}},
	{"metallb", []string{"metallb/config/manifests/metallb-native.yaml"}},
	{"gatekeeper", []string{"gatekeeper/deploy/gatekeeper.yaml"}},
	{"longhorn", []string{"longhorn/deploy/longhorn.yaml"}},
}

// corpusDir is where TestMain unpacked the corpus.
var corpusDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tollgate-corpus-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	corpusDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// level is one Pod Security set as check loads it, and Kubernetes' checks
// of its controls.
type level struct {
	level   api.Level
	file    string
	control map[string]psa.CheckID // policy name: Pod Security check
	checks  map[psa.CheckID]psa.CheckPodFn
	eval    psa.Evaluator
}

func loadLevel(t *testing.T, l api.Level) *level {
	t.Helper()
	file, err := filepath.Abs(filepath.Join("..", "..", "policies", "sets", "pod-security-"+string(l)+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadPath(file)
	if err != nil {
		t.Fatal(err)
	}
	latest := map[psa.CheckID]psa.CheckPodFn{}
	for _, c := range psa.DefaultChecks() {
		latest[c.ID] = c.Versions[len(c.Versions)-1].CheckPod
	}
	eval, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := &level{level: l, file: file, control: map[string]psa.CheckID{}, checks: map[psa.CheckID]psa.CheckPodFn{}, eval: eval}
	for _, p := range set.Policies {
		id := psa.CheckID(p.Metadata.Labels[controlLabel])
		fn, ok := latest[id]
		if !ok {
			t.Fatalf("%s: policy %s names no Pod Security check (%q)", file, p.Name(), id)
		}
		lv.control[p.Name()] = id
		lv.checks[id] = fn
	}
	return lv
}

// kubernetes is what Pod Security decides for a pod template: the checks of
// the level that forbid it, and the level's verdict.
func (l *level) kubernetes(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (failing []string, allowed bool) {
	for id, check := range l.checks {
		if !check(meta, spec).Allowed {
			failing = append(failing, string(id))
		}
	}
	sort.Strings(failing)
	lv := api.LevelVersion{Level: l.level, Version: api.LatestVersion()}
	return failing, psa.AggregateCheckResults(l.eval.EvaluatePod(lv, meta, spec)).Allowed
}

// check runs tollgate check with the level's set on paths and reads its
// report.
func check(t *testing.T, l *level, paths []string) (int, *report.Report) {
	t.Helper()
	args := []string{"check", "-c", l.file, "-o", "json"}
	for _, p := range paths {
		args = append(args, "-f", p)
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &stdout, &stderr)
	var r report.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("tollgate %s: exit %d, no report (%v); stderr:\n%s", strings.Join(args, " "), code, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return code, &r
}

// key names an object of the input: file:line, kind and name (a List's
// items share its line).
type key struct{ where, kind, name string }

func keyOf(o *manifest.Object) key {
	name := o.Name
	if name == "" {
		name = o.GenerateName
	}
	return key{o.Where(), o.GVK.Kind, name}
}

// maxErrors is how many error results of one run are shown.
const maxErrors = 5

// verdict is tollgate's decision on one object: the policies that failed it,
// and whether any policy passed or failed it at all.
type verdict struct {
	failing []string
	decided bool
}

func verdicts(t *testing.T, l *level, r *report.Report) map[key]*verdict {
	t.Helper()
	out := map[key]*verdict{}
	errs := 0
	defer func() {
		if errs > maxErrors {
			t.Errorf("... and %d more error results", errs-maxErrors)
		}
	}()
	for _, res := range r.Results {
		if len(res.Resources) != 1 {
			t.Errorf("result %s has %d resources", res.Policy, len(res.Resources))
			continue
		}
		k := key{res.Properties["file"], res.Resources[0].Kind, res.Resources[0].Name}
		v := out[k]
		if v == nil {
			v = &verdict{}
			out[k] = v
		}
		switch res.Result {
		case engine.Error:
			if errs++; errs > maxErrors {
				continue
			}
			t.Errorf("%s %s/%s: %s: error: %s", k.where, k.kind, k.name, res.Policy, res.Message)
		case engine.Fail:
			id, ok := l.control[res.Policy]
			if !ok {
				t.Errorf("%s: a result of policy %s, which is not in the set", k.where, res.Policy)
			}
			v.failing = append(v.failing, string(id))
			v.decided = true
		case engine.Pass:
			v.decided = true
		}
	}
	for _, v := range out {
		sort.Strings(v.failing)
	}
	return out
}

// podTemplate is the pod metadata and spec Pod Security reads of o, or nil
// for an object that has none.
func podTemplate(t *testing.T, o *manifest.Object) (*metav1.ObjectMeta, *corev1.PodSpec) {
	t.Helper()
	gvr, _ := meta.UnsafeGuessKindToResource(o.GVK)
	if !(psadmission.DefaultPodSpecExtractor{}).HasPodSpec(gvr.GroupResource()) {
		return nil, nil
	}
	js, err := defaulted(o)
	if err != nil {
		t.Errorf("%s: %s: %v", o.Where(), o, err)
		return nil, nil
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		t.Errorf("%s: %s: %v", o.Where(), o, err)
		return nil, nil
	}
	m, spec, err := psadmission.DefaultPodSpecExtractor{}.ExtractPodSpec(obj)
	if err != nil {
		t.Errorf("%s: %s: %v", o.Where(), o, err)
		return nil, nil
	}
	return m, spec
}

// defaulted is o as the apiserver hands it to admission, defaulted with
// Kubernetes' generated defaulting functions, which is what Pod Security
// decides (a volume that names no source is an emptyDir).
func defaulted(o *manifest.Object) ([]byte, error) {
	out, _, err := defaulting.Object(o.GVK, o.JSON)
	return out, err
}

// TestPodSecurityCorpus checks every corpus run with each Pod Security set:
// check decides (exit 0 or 1, never 2, no error result), only workloads get
// results, and each workload's failing controls are those Kubernetes' Pod
// Security evaluator finds in its pod template.
func TestPodSecurityCorpus(t *testing.T) {
	root := unpack(t)
	lvs := map[api.Level]*level{}
	for _, l := range levels {
		lvs[l] = loadLevel(t, l)
	}
	// Paths relative to the corpus, as a user names them.
	t.Chdir(root)
	for _, run := range runs {
		objs, err := manifest.Read(run.paths, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range levels {
			lv := lvs[l]
			t.Run(run.name+"/"+string(l), func(t *testing.T) {
				code, r := check(t, lv, run.paths)
				if code != 0 && code != 1 {
					t.Errorf("exit %d, want 0 or 1 (summary %+v)", code, r.Summary)
				}
				compareObjects(t, lv, objs, verdicts(t, lv, r), code)
			})
		}
	}
}

// compareObjects compares tollgate's verdicts with Pod Security's, object
// by object, and logs the counts.
func compareObjects(t *testing.T, lv *level, objs []*manifest.Object, vs map[key]*verdict, code int) {
	t.Helper()
	known := map[key]int{}
	for _, o := range objs {
		known[keyOf(o)]++
	}
	for k := range vs {
		if known[k] == 0 {
			t.Errorf("a result for %s %s at %s, which is no object of the input", k.kind, k.name, k.where)
		}
	}
	var workloads, exempt, denied, agreeing int
	tollgateDenies := false
	for _, v := range vs {
		tollgateDenies = tollgateDenies || len(v.failing) > 0
	}
	for _, o := range objs {
		k := keyOf(o)
		v := vs[k]
		m, spec := podTemplate(t, o)
		if spec == nil {
			if v != nil && v.decided {
				t.Errorf("%s: %s has no pod template, yet a Pod Security policy passed or failed it", o.Where(), o)
			}
			continue
		}
		workloads++
		if known[k] > 1 {
			t.Errorf("%s: %d objects %s at one place; their results cannot be told apart", o.Where(), known[k], o)
			continue
		}
		if slices.Contains(policy.SystemNamespaces, o.Namespace) && (v == nil || !v.decided) {
			exempt++ // tollgate never acts in the system namespaces
			continue
		}
		want, allowed := lv.kubernetes(m, spec)
		if allowed != (len(want) == 0) {
			t.Errorf("%s: %s: Pod Security's level verdict allowed=%v, its checks forbid %v", o.Where(), o, allowed, want)
		}
		if !allowed {
			denied++
		}
		switch {
		case v == nil || !v.decided:
			t.Errorf("%s: %s: no Pod Security policy decided it; Kubernetes forbids %v", o.Where(), o, want)
		case !slices.Equal(v.failing, want):
			t.Errorf("%s: %s: tollgate's %s set fails %v, Kubernetes' Pod Security forbids %v", o.Where(), o, lv.level, v.failing, want)
		default:
			agreeing++
		}
	}
	if wantCode := map[bool]int{false: 0, true: 1}[tollgateDenies]; code != wantCode && (code == 0 || code == 1) {
		t.Errorf("exit %d, want %d: the exit status does not follow the results", code, wantCode)
	}
	if workloads == 0 {
		t.Error("no workload in the input: nothing was compared")
	}
	t.Logf("%s: %d objects, %d workloads (%d in system namespaces, not checked), %d denied by Pod Security, %d agreeing; exit %d",
		t.Name(), len(objs), workloads, exempt, denied, agreeing, code)
}

// fixtures is the directory of Pod Security's own fixtures for a level at
// the newest version they have: pass/ and fail/ side by side.
func fixtures(t *testing.T, l api.Level) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("locate k8s.io/pod-security-admission: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "test", "testdata", string(l))
	versions, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	newest, minor := "", -1
	for _, v := range versions {
		var major, m int
		if _, err := fmt.Sscanf(v.Name(), "v%d.%d", &major, &m); err == nil && major == 1 && m > minor {
			newest, minor = v.Name(), m
		}
	}
	if newest == "" {
		t.Fatalf("%s: no version directory", dir)
	}
	return filepath.Join(dir, newest)
}

// TestPodSecurityFixtures checks Pod Security's own fixtures of each level,
// pass/ and fail/ in one run (their names repeat): every fail fixture is
// denied and every pass fixture allowed.
func TestPodSecurityFixtures(t *testing.T) {
	for _, l := range levels {
		t.Run(string(l), func(t *testing.T) {
			lv := loadLevel(t, l)
			dir := fixtures(t, l)
			objs, err := manifest.Read([]string{dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			code, r := check(t, lv, []string{dir})
			if code != 1 {
				t.Errorf("exit %d, want 1: the fail fixtures are denied (summary %+v)", code, r.Summary)
			}
			vs := verdicts(t, lv, r)
			var pass, fail, agreeing int
			for _, o := range objs {
				wantDenied := strings.Contains(filepath.ToSlash(o.File), "/fail/")
				if wantDenied {
					fail++
				} else {
					pass++
				}
				v := vs[keyOf(o)]
				switch {
				case v == nil || !v.decided:
					t.Errorf("%s: %s: no Pod Security policy decided it", o.Where(), o)
				case (len(v.failing) > 0) != wantDenied:
					t.Errorf("%s: %s: tollgate's %s set fails %v; Kubernetes' fixture is in %s", o.Where(), o, l, v.failing, filepath.Base(filepath.Dir(o.File)))
				default:
					agreeing++
				}
			}
			t.Logf("%s: fixtures %s: %d, %d in pass/ and %d in fail/, %d agreeing; exit %d",
				t.Name(), filepath.Base(dir), len(objs), pass, fail, agreeing, code)
		})
	}
}
