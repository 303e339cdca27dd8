package native_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cli"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/native"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// TestDecidesAsWebhook compiles policies and runs `tollgate check` twice on
// the same manifests: with the policies, and with the
// ValidatingAdmissionPolicies compiled from them (which tollgate decides
// with the apiserver's own validator). Every compiled policy must give
// every object the same outcome, and each denial the same message.
func TestDecidesAsWebhook(t *testing.T) {
	corpus := podCorpus(t)
	for _, tc := range []struct {
		name, config, objects string
		native                int // how many policies compile
	}{
		{"library", "../../policies", corpus, 26},
		{"baseline", "../../policies/sets/pod-security-baseline.yaml", corpus, 12},
		{"seed", "../policy/defaults.yaml", "../../examples/tests/seed/resources.yaml", 1},
		{"features", "testdata/features.yaml", "testdata/features-objects.yaml", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := policy.Load(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			out, err := native.Compile(set, native.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Native) != tc.native {
				t.Fatalf("%d policies compiled, want %d; kept: %v", len(out.Native), tc.native, out.Webhook)
			}
			compiled := filepath.Join(t.TempDir(), "native.yaml")
			y, err := registration.YAML(out.Objects()...)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(compiled, y, 0o600); err != nil {
				t.Fatal(err)
			}
			byName := map[string]*policy.Policy{}
			for _, p := range set.Policies {
				byName[p.Name()] = p
			}
			webhook, vap := check(t, tc.config, tc.objects), check(t, compiled, tc.objects)
			counts := map[engine.Outcome]int{}
			for obj, results := range webhook {
				for _, p := range out.Native {
					w, n := results[p], vap[obj][native.Name(p)]
					counts[w.outcome]++
					switch {
					case w.outcome != n.outcome:
						t.Errorf("%s, %s: webhook %s %q, native %s %q", obj, p, w.outcome, w.message, n.outcome, n.message)
					case (w.outcome == engine.Fail || w.outcome == engine.Warn) && warning(byName[p], w.message) != n.message:
						t.Errorf("%s, %s: messages differ\n webhook: %s\n native:  %s", obj, p, w.message, n.message)
					}
				}
			}
			if len(webhook) != len(vap) {
				t.Errorf("%d objects decided by the policies, %d by the compiled ones", len(webhook), len(vap))
			}
			t.Logf("%d objects, %d policies: %v", len(webhook), len(out.Native), counts)
			if counts[engine.Fail] == 0 || counts[engine.Pass] == 0 {
				t.Errorf("the corpus does not tell allow from deny: %v", counts)
			}
		})
	}
}

// warning is what the apiserver says after its prefix when a compiled
// Warn policy warns: the policy and the problems, as tollgate's webhook
// warns; msg for anything else.
func warning(p *policy.Policy, msg string) string {
	sep := " violates policy " + p.Name() + ": "
	if i := strings.Index(msg, sep); i >= 0 && p.Spec.Validate.Action == policy.Warn {
		return p.Name() + ": " + msg[i+len(sep):]
	}
	return msg
}

type outcome struct {
	outcome engine.Outcome
	message string
}

// check runs `tollgate check` and returns each object's results by
// policy, denials stripped of the apiserver's prefix for a
// ValidatingAdmissionPolicy.
func check(t *testing.T, config, objects string) map[string]map[string]outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"check", "-c", config, "-f", objects, "-o", "json"}, nil, &stdout, &stderr)
	if code != 0 && code != 1 {
		t.Fatalf("check -c %s: exit %d\n%s", config, code, stderr.String())
	}
	var r report.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	out := map[string]map[string]outcome{}
	for _, res := range r.Results {
		msg := res.Message
		msg = strings.TrimPrefix(msg, fmt.Sprintf("ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s' denied request: ", res.Policy))
		msg = strings.TrimPrefix(msg, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s': ", res.Policy))
		for _, o := range res.Resources {
			key := o.Kind + "/" + o.Namespace + "/" + o.Name
			if out[key] == nil {
				out[key] = map[string]outcome{}
			}
			out[key][res.Policy] = outcome{outcome: res.Result, message: msg}
		}
	}
	return out
}

// podCorpus writes the Pods of k8s.io/pod-security-admission's fixtures
// (every level, the newest version) and of the library's edge cases into
// a directory, each as a Pod, a Pod with a generateName, a Deployment and
// a CronJob with it as their template.
func podCorpus(t *testing.T) string {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("locate k8s.io/pod-security-admission: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(mod)), "test", "testdata", "*", "v1.37", "*", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no pod-security-admission fixtures for v1.37")
	}
	edge, _ := filepath.Glob("../../policies/testdata/pod-security/*.yaml")
	files = append(files, edge...)
	dir := t.TempDir()
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			var pod map[string]any
			if err := yaml.Unmarshal(doc, &pod); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if pod == nil {
				continue
			}
			n++
			meta, _ := pod["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["namespace"] = "demo"
			meta["name"] = fmt.Sprintf("p%d", n)
			pod["metadata"] = meta
			generated := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": pod["spec"],
				"metadata": map[string]any{"namespace": "demo", "generateName": fmt.Sprintf("g%d-", n), "labels": meta["labels"]}}
			tmpl := map[string]any{"metadata": map[string]any{"labels": meta["labels"], "annotations": meta["annotations"]}, "spec": pod["spec"]}
			deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": "demo", "name": fmt.Sprintf("d%d", n)},
				"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}}, "template": tmpl}}
			cronJob := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
				"metadata": map[string]any{"namespace": "demo", "name": fmt.Sprintf("cj%d", n)},
				"spec":     map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl}}}}
			var b bytes.Buffer
			for _, obj := range []map[string]any{pod, generated, deployment, cronJob} {
				y, err := yaml.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("---\n")
				b.Write(y)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.yaml", n)), b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestCompileGolden holds the compiled form of the seed policies and of
// the feature policies to files (go test -update rewrites them).
func TestCompileGolden(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"seed", "../policy/defaults.yaml"},
		{"features", "testdata/features.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := policy.Load(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			out, err := native.Compile(set, native.Options{ExcludedNamespaces: []string{"kube-system", "tollgate"}})
			if err != nil {
				t.Fatal(err)
			}
			y, err := registration.YAML(out.Objects()...)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".native.yaml"), y)
		})
	}
}

// TestKeptOnWebhook: what cannot be compiled stays on the webhook, with
// the reason; a Kubernetes VAP is kept as it is, with its binding.
func TestKeptOnWebhook(t *testing.T) {
	set, err := policy.Load("testdata/kept.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := native.Compile(set, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"adds-labels": "mutation is not compiled",
		"reads-pdbs":  "spec.references",
		"exempted":    `PolicyException "cni-agent" (testdata/kept.yaml: document 4) exempts objects from it`,
		"injects":     "injection is not compiled",
	}
	got := map[string]string{}
	for _, k := range out.Webhook {
		got[k.Policy] = k.Reason
	}
	for name, fragment := range want {
		if !strings.Contains(got[name], fragment) {
			t.Errorf("%s: kept for %q, want a reason with %q", name, got[name], fragment)
		}
	}
	if len(got) != len(want) {
		t.Errorf("kept %v, want only %v", got, want)
	}
	if len(out.Native) != 1 || out.Native[0] != "replicas-limit" || len(out.Validating) != 1 || len(out.ValidatingBinding) != 1 {
		t.Fatalf("native %v, %d VAPs, %d bindings: want replicas-limit and its binding", out.Native, len(out.Validating), len(out.ValidatingBinding))
	}
	if v := out.Validating[0]; v.Name != "replicas-limit" || v.Labels[native.ManagedByLabel] != native.ManagedBy || v.Spec.Validations[0].Expression != "object.spec.replicas <= 5" {
		t.Errorf("the VAP is not kept as it is: %+v", v)
	}
}
