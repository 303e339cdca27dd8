//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// The replay test's namespaces: phase 1 runs its traffic in the first
// two under live.yaml, phase 2 the same traffic in the last two under
// candidate.yaml. The audit policy logs them at RequestResponse level
// (Secrets at Metadata), and every Namespace; nothing else.
var replayNamespaces = []string{"replay-1-a", "replay-1-b", "replay-2-a", "replay-2-b"}

func writeAuditPolicy(work string) (string, error) {
	ns := strings.Join(replayNamespaces, ", ")
	policy := fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  namespaces: [%s]
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  namespaces: [%s]
- level: RequestResponse
  resources: [{group: "", resources: [namespaces]}]
- level: None
`, ns, ns)
	path := filepath.Join(work, "audit-policy.yaml")
	return path, os.WriteFile(path, []byte(policy), 0o644)
}

// TestReplay: the traffic of three users (creates, updates, patches of
// three kinds, deletes, dry runs, execs) through the live webhook; then
// `tollgate replay` of the apiserver's audit log gives, for every event it
// replays, the live decision and message. With the candidate policies it
// gives the decisions the webhook gives once they are loaded and the same
// traffic is sent again.
func TestReplay(t *testing.T) {
	work := t.TempDir()
	live := replayConfig(t, work, "live")
	candidate := replayConfig(t, work, "candidate")

	stop := serveReplayPolicies(t, work, "live")
	replayTraffic(t, "replay-1-a", "replay-1-b")
	stop()
	stop = serveReplayPolicies(t, work, "candidate")
	replayTraffic(t, "replay-2-a", "replay-2-b")
	stop()
	if err := cluster.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx(t), "tollgate-replay", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	phase1 := splitAuditLog(t, work, "replay-1-")
	phase2 := splitAuditLog(t, work, "replay-2-")
	if dir := os.Getenv("TOLLGATE_REPLAY_TESTDATA"); dir != "" {
		// Refreshes internal/replay/testdata: the unit tests read this log.
		data, err := os.ReadFile(phase1)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "audit.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Phase 1 replayed with the live policies: the live decisions.
	out, code := runReplay(t, "-c", live, "-f", phase1, "--events", filepath.Join(work, "live.jsonl"))
	t.Logf("tollgate replay -c live -f phase-1.log:\n%s", out)
	if code != 3 {
		t.Errorf("exit %d, want 3: the Secret, logged at Metadata level, is set aside", code)
	}
	if !strings.Contains(out, "level Metadata: the event holds no object") {
		t.Errorf("the Metadata event is not named as set aside")
	}
	got1 := readDecisions(t, filepath.Join(work, "live.jsonl"))
	denied := sameAsLive(t, "phase 1, live policies", got1)
	ops := map[string]int{}
	for _, d := range got1 {
		ops[d.Operation]++
		if d.DryRun {
			ops["dry run"]++
		}
		if d.Name == "app" && d.Operation == "CREATE" && d.Namespace == "replay-1-b" && !d.Mutated {
			t.Errorf("Pod replay-1-b/app: replay did not inject the sidecar the live webhook injected")
		}
	}
	for _, op := range []string{"CREATE", "UPDATE", "DELETE", "CONNECT", "dry run"} {
		if ops[op] == 0 {
			t.Errorf("no %s replayed: %v", op, ops)
		}
	}
	t.Logf("phase 1: %d requests replayed (%v), %d denied, every decision and message as live", len(got1), ops, denied)

	// Phase 2 replayed with the candidate policies: its live decisions.
	if _, code := runReplay(t, "-c", candidate, "-f", phase2, "--events", filepath.Join(work, "candidate-live.jsonl")); code != 3 {
		t.Errorf("phase 2: exit %d, want 3", code)
	}
	got2 := readDecisions(t, filepath.Join(work, "candidate-live.jsonl"))
	sameAsLive(t, "phase 2, candidate policies", got2)

	// Phase 1 with the candidate: what phase 2 saw live, request by request.
	out, _ = runReplay(t, "-c", live, "--diff-config", candidate, "-f", phase1, "--events", filepath.Join(work, "diff.jsonl"))
	t.Logf("tollgate replay -c live --diff-config candidate -f phase-1.log:\n%s", out)
	diff := readDecisions(t, filepath.Join(work, "diff.jsonl"))
	if len(diff) != len(got2) {
		t.Fatalf("%d requests replayed from phase 1, %d from phase 2: the traffic differs", len(diff), len(got2))
	}
	changed := 0
	for i, d := range diff {
		p2 := got2[i]
		if d.Verb != p2.Verb || d.Resource != p2.Resource || d.Name != p2.Name {
			t.Fatalf("request %d: %s %s %s in phase 1, %s %s %s in phase 2", i, d.Verb, d.Resource, d.Name, p2.Verb, p2.Resource, p2.Name)
		}
		want := liveDenial(p2.Live)
		if d.Candidate == nil {
			t.Fatalf("request %d: no candidate decision", i)
		}
		if d.Candidate.Allowed == (want != "") {
			t.Errorf("%s %s %s: the candidate replayed allows=%v; live under the candidate: %d %s", d.Verb, d.Resource, d.Name, d.Candidate.Allowed, p2.Live.Code, p2.Live.Message)
		} else if want != "" && !contains(d.Candidate.Denials, strings.ReplaceAll(want, "replay-2-", "replay-1-")) {
			t.Errorf("%s %s %s: live under the candidate said %q; the candidate replayed %q", d.Verb, d.Resource, d.Name, want, d.Candidate.Denials)
		}
		if d.Allowed != d.Candidate.Allowed {
			changed++
		}
	}
	if changed < 3 {
		t.Errorf("the candidate changes %d decisions, want at least 3 (scale to 10, exec by alice, a Service with no owner)", changed)
	}
	t.Logf("candidate: %d requests, %d decisions change, each as live under the candidate", len(diff), changed)
}

// replayDecision is what replay's --events holds, as far as the test reads it.
type replayDecision struct {
	Verb, Operation, Resource, Namespace, Name, User string
	DryRun                                           bool
	Allowed, Mutated                                 bool
	Message                                          string
	Denials                                          []string
	Candidate                                        *struct {
		Allowed bool
		Denials []string
	}
	Live struct {
		Code    int32
		Message string
	}
}

// sameAsLive checks that each replayed decision is the live one, and
// returns how many were denied.
func sameAsLive(t *testing.T, what string, ds []replayDecision) int {
	t.Helper()
	if len(ds) == 0 {
		t.Fatalf("%s: nothing replayed", what)
	}
	denied := 0
	for _, d := range ds {
		want := liveDenial(d.Live)
		switch {
		case d.Allowed && want != "":
			t.Errorf("%s: %s %s %s/%s by %s: replay allows; live denied: %s", what, d.Verb, d.Resource, d.Namespace, d.Name, d.User, want)
		case !d.Allowed && want == "":
			t.Errorf("%s: %s %s %s/%s by %s: replay denies (%s); live: %d %s", what, d.Verb, d.Resource, d.Namespace, d.Name, d.User, d.Message, d.Live.Code, d.Live.Message)
		case !d.Allowed && !contains(d.Denials, want):
			t.Errorf("%s: %s %s %s/%s: live said %q; replay %q", what, d.Verb, d.Resource, d.Namespace, d.Name, want, d.Denials)
		case !d.Allowed:
			denied++
		}
	}
	return denied
}

// liveDenial is the message of a webhook's denial in the apiserver's
// answer, "" when no webhook denied.
func liveDenial(l struct {
	Code    int32
	Message string
}) string {
	_, msg, ok := strings.Cut(l.Message, "denied the request: ")
	if !ok || !strings.HasPrefix(l.Message, "admission webhook ") {
		return ""
	}
	return msg
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readDecisions(t *testing.T, file string) []replayDecision {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []replayDecision
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d replayDecision
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, d)
	}
	return out
}

func runReplay(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(cluster.bin, append([]string{"replay"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return stdout.String(), cmd.ProcessState.ExitCode()
}

// replayConfig is a directory of tollgate's embedded defaults, which the
// shared tollgate serves, and the test's policies of one phase.
func replayConfig(t *testing.T, work, phase string) string {
	t.Helper()
	dir := filepath.Join(work, phase)
	policies, err := os.ReadFile(filepath.Join("testdata", "replay", phase+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"defaults.yaml": policy.DefaultsYAML(), phase + ".yaml": policies} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serveReplayPolicies runs a second tollgate with the phase's policies
// alone, registers its webhooks as tollgate-replay, and waits until they
// decide; stop ends it.
func serveReplayPolicies(t *testing.T, work, phase string) (stop func()) {
	t.Helper()
	config := filepath.Join("testdata", "replay", phase+".yaml")
	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logf, err := os.Create(filepath.Join(work, "tollgate-"+phase+".log"))
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(cluster.bin, "serve", "--config", config, "--listen", addr,
		"--tls-cert-file", filepath.Join(cluster.servDir, certs.CertFile),
		"--tls-private-key-file", filepath.Join(cluster.servDir, certs.KeyFile),
		"--namespace", ownNamespace, "--metrics-listen=")
	srv.Env, srv.Stdout, srv.Stderr = framework.ProcessEnv(), logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
		logf.Close()
	}
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("tollgate %s log:\n%s", phase, data[max(0, len(data)-4000):])
		}
	})
	framework.WaitFor(t, 30*time.Second, "tollgate "+phase+" ready", func() bool {
		resp, err := httpsClient().Get("https://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	manifests, err := exec.Command(cluster.bin, "manifests", "--config", config, "--name", "tollgate-replay",
		"--url", "https://"+addr, "--ca-file", filepath.Join(cluster.certDir, certs.CAFile), "--namespace", ownNamespace).Output()
	if err != nil {
		stop()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("tollgate manifests: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("tollgate manifests: %v", err)
	}
	webhooks := cluster.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	_ = webhooks.Delete(ctx(t), "tollgate-replay", metav1.DeleteOptions{})
	if n, err := framework.ApplyWebhooks(ctx(t), cluster.client, manifests); err != nil || n != 1 {
		t.Fatalf("%d configurations applied, want 1: %v", n, err)
	}
	// In effect once a dry run the phase's policies alone deny is denied.
	if err := ensureNamespace("replay-warmup", map[string]string{"replay-e2e": "yes"}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	framework.WaitFor(t, 30*time.Second, "the "+phase+" webhooks in effect", func() bool {
		_, errCM := cluster.client.CoreV1().ConfigMaps("replay-warmup").Create(context.Background(), cm, dry)
		_, errSvc := cluster.client.CoreV1().Services("replay-warmup").Create(context.Background(), svc, dry)
		if phase == "live" {
			return errCM != nil && errSvc == nil
		}
		return errCM != nil && errSvc != nil
	})
	return stop
}

// splitAuditLog writes the events of one phase's namespaces (and of the
// Namespaces themselves) to a file of their own, in order.
func splitAuditLog(t *testing.T, work, prefix string) string {
	t.Helper()
	in, err := os.Open(cluster.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(work, prefix+"audit.log")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	r := bufio.NewReaderSize(in, 1<<20)
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ev struct {
				ObjectRef *struct{ Namespace, Name, Resource string }
			}
			if json.Unmarshal(line, &ev) == nil && ev.ObjectRef != nil &&
				(strings.HasPrefix(ev.ObjectRef.Namespace, prefix) || ev.ObjectRef.Resource == "namespaces" && strings.HasPrefix(ev.ObjectRef.Name, prefix)) {
				if _, err := out.Write(line); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatalf("no event of %s* in %s", prefix, cluster.auditLog)
	}
	return path
}
