//go:build e2e

// Package auditscale is the background audit's scale benchmark: N existing
// objects in a real kube-apiserver, then the leader started with 20
// policies (16 in its config, 4 of the cluster's VAPs). Not part of make
// test or make e2e: TOLLGATE_AUDIT_SCALE=N runs it (make audit-scale N=…;
// docs/deploy.md has the figures).
package auditscale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

var reportsResource = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}

// TestAuditScale: TOLLGATE_AUDIT_SCALE objects; TOLLGATE_BIN a tollgate
// binary to measure (default: built from this tree);
// TOLLGATE_LEADER_GOMEMLIMIT the leader's GOMEMLIMIT;
// TOLLGATE_AUDIT_SCALE_PROFILE a file for the leader's heap profile after
// its first complete reports (go tool pprof -sample_index=inuse_space).
func TestAuditScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TOLLGATE_AUDIT_SCALE"))
	if n <= 0 {
		t.Skip("TOLLGATE_AUDIT_SCALE=N runs it")
	}
	ctx := context.Background()
	cp, client, err := framework.StartControlPlane(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	work := t.TempDir()
	if err := framework.InstallReportCRDs(cp.Config, "openreports"); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("TOLLGATE_BIN")
	if bin == "" {
		bin = filepath.Join(work, "tollgate")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/tollgate")
		build.Dir, build.Env = framework.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	apiserver, err := framework.FindAPIServer(cp, "")
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	created, err := createObjects(ctx, cp.Config, n, 32, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	spaces := max(1, n/perNamespace)
	t.Logf("%d objects created in %d namespaces in %s", created, spaces, time.Since(start).Round(time.Second))

	kubeconfig := filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, cp.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "create", "-f", filepath.Join("testdata", "cluster-vaps.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("cluster VAPs: %v\n%s", err, out)
	}
	if err := framework.EnsureNamespace(ctx, client, "tollgate-system", nil); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(work, "policies")
	if err := os.MkdirAll(config, 0o755); err != nil {
		t.Fatal(err)
	}
	policies, err := os.ReadFile(filepath.Join("testdata", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "policies.yaml"), policies, 0o644); err != nil {
		t.Fatal(err)
	}

	leader := startLeader(t, bin, kubeconfig, config, work)
	cpuBefore := cpuSeconds(t, apiserver.PID())

	// Every object evaluated: the leader's log says so.
	var evaluated time.Duration
	var took string
	framework.WaitFor(t, 30*time.Minute, "every object evaluated", func() bool {
		evaluated, took = leader.evaluated(t, created)
		return evaluated > 0
	})
	// The first complete set of reports: writes stop for 3 write intervals.
	var writes int
	last := time.Now()
	framework.WaitFor(t, 30*time.Minute, "the first reports written", func() bool {
		w := leader.writes(t)
		if w != writes {
			writes, last = w, time.Now()
		}
		time.Sleep(500 * time.Millisecond)
		return writes >= spaces && time.Since(last) > 6*time.Second
	})
	reported := last.Sub(leader.started)
	cpu := cpuSeconds(t, apiserver.PID()) - cpuBefore
	rss, hwm := framework.Memory(t, leader.cmd.Process.Pid)
	heap := leader.metric(t, "go_memstats_heap_inuse_bytes")
	if file := os.Getenv("TOLLGATE_AUDIT_SCALE_PROFILE"); file != "" {
		leader.heapProfile(t, file)
	}
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	objects, results, reports, largest := readReports(t, ctx, dyn)
	if objects != created {
		t.Errorf("%d objects in the reports, want %d", objects, created)
	}

	// Nothing changes: no write.
	idleFrom := leader.writes(t)
	time.Sleep(20 * time.Second)
	idle := leader.writes(t) - idleFrom

	// One object changes: its report follows.
	cm, err := client.CoreV1().ConfigMaps(namespaceName(0)).Get(ctx, "cm-00", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels = map[string]string{"owner": "team-b"}
	if _, err := client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	latency := framework.WaitFor(t, time.Minute, "the changed ConfigMap's report", func() bool {
		return resultOf(t, ctx, dyn, cm.Namespace, string(cm.UID), "cm-owner") == "pass"
	})

	rssEnd, _ := framework.Memory(t, leader.cmd.Process.Pid)
	heapEnd := leader.metric(t, "go_memstats_heap_inuse_bytes")

	t.Logf("RESULT objects=%d namespaces=%d policies=20 binary=%s leader GOMEMLIMIT=%q", created, spaces, bin, os.Getenv("TOLLGATE_LEADER_GOMEMLIMIT"))
	t.Logf("RESULT every object evaluated %s after the leader started (its evaluation took %s); first complete reports %s after start",
		evaluated.Round(100*time.Millisecond), took, reported.Round(100*time.Millisecond))
	t.Logf("RESULT leader RSS %d MiB (peak %d MiB), Go heap in use %d MiB", rss>>20, hwm>>20, int64(heap)>>20)
	t.Logf("RESULT %d report writes in the first pass (%.1f/s), %d reports, %d results, largest report %d KiB; apiserver CPU %.1f s from the leader's start to its first complete reports",
		writes, float64(writes)/reported.Seconds(), reports, results, largest>>10, cpu)
	t.Logf("RESULT %d report writes in 20 s with nothing changing; one ConfigMap's change in its report after %s", idle, latency.Round(10*time.Millisecond))
	t.Logf("RESULT leader RSS %d MiB, Go heap in use %d MiB at the end (20 s idle, then one change)", rssEnd>>20, int64(heapEnd)>>20)
	if idle != 0 {
		t.Errorf("%d report writes while nothing changed", idle)
	}
}

type leader struct {
	cmd     *exec.Cmd
	log     string
	metrics int
	started time.Time
	said    bool
}

func startLeader(t *testing.T, bin, kubeconfig, config, work string) *leader {
	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	mport, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	l := &leader{log: filepath.Join(work, "leader.log"), metrics: mport}
	logf, err := os.Create(l.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--kubeconfig", kubeconfig, "--namespace", "tollgate-system", "--config", config,
		"--register=false", "--cert-source", "self",
		"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport)}
	if os.Getenv("TOLLGATE_AUDIT_SCALE_PROFILE") != "" {
		args = append(args, "--profiling")
	}
	l.cmd = exec.Command(bin, args...)
	// TOLLGATE_LEADER_GOMEMLIMIT is the leader's GOMEMLIMIT alone, as the
	// deploy sets it from limits.memory (not the apiserver's or etcd's).
	l.cmd.Env = framework.ProcessEnv("POD_NAME=scale-leader", "GOMEMLIMIT="+os.Getenv("TOLLGATE_LEADER_GOMEMLIMIT"))
	l.cmd.Stdout, l.cmd.Stderr = logf, logf
	l.started = time.Now()
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = l.cmd.Process.Kill()
		_ = l.cmd.Wait()
		logf.Close()
		if t.Failed() {
			out, _ := os.ReadFile(l.log)
			t.Logf("leader log (tail):\n%s", tail(string(out), 4000))
		}
	})
	return l
}

// heapProfile saves the leader's heap profile (--profiling), taken after
// a garbage collection, to file.
func (l *leader) heapProfile(t *testing.T, file string) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", l.metrics))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("heap profile: %d %v", resp.StatusCode, err)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("RESULT heap profile in %s", file)
}

// evaluated is when, after the leader started, its log first said every
// object (at least n) was evaluated, and how long that evaluation took.
func (l *leader) evaluated(t *testing.T, n int) (time.Duration, string) {
	f, err := os.Open(l.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Time    time.Time `json:"time"`
			Msg     string    `json:"msg"`
			Objects int       `json:"objects"`
			Took    float64   `json:"took"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if strings.HasPrefix(line.Msg, "background audit: informers start") && !l.said {
			l.said = true
			t.Logf("leader: %s", sc.Text())
		}
		if line.Msg == "background audit: every object evaluated" && line.Objects >= n {
			return line.Time.Sub(l.started), time.Duration(line.Took).Round(100 * time.Millisecond).String()
		}
	}
	return 0, ""
}

var writesLine = regexp.MustCompile(`(?m)^tollgate_background_audit_report_writes_total\{op="[a-z]+"\} (\d+)$`)

func (l *leader) page(t *testing.T) string {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", l.metrics))
	if err != nil {
		t.Log(err)
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// writes sums the leader's report writes.
func (l *leader) writes(t *testing.T) int {
	n := 0
	for _, m := range writesLine.FindAllStringSubmatch(l.page(t), -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// metric is the value of an unlabelled metric.
func (l *leader) metric(t *testing.T, name string) float64 {
	for _, line := range strings.Split(l.page(t), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// readReports lists the benchmark's reports a page at a time: the objects
// they name, their results, how many and the largest's size.
func readReports(t *testing.T, ctx context.Context, dyn dynamic.Interface) (objects, results, reports, largest int) {
	uids := map[string]bool{}
	opts := metav1.ListOptions{Limit: 20}
	for {
		list, err := dyn.Resource(reportsResource).List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if !strings.HasPrefix(item.GetNamespace(), "scale-") {
				continue
			}
			js, _ := json.Marshal(item.Object)
			largest = max(largest, len(js))
			reports++
			rs, _ := item.Object["results"].([]any)
			results += len(rs)
			for _, r := range rs {
				res, _ := r.(map[string]any)["resources"].([]any)
				if len(res) > 0 {
					uids[fmt.Sprint(res[0].(map[string]any)["uid"])] = true
				}
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return len(uids), results, reports, largest
		}
	}
}

// resultOf is a policy's result for an object in its namespace's reports.
func resultOf(t *testing.T, ctx context.Context, dyn dynamic.Interface, namespace, uid, policy string) string {
	list, err := dyn.Resource(reportsResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Log(err)
		return ""
	}
	for _, item := range list.Items {
		rs, _ := item.Object["results"].([]any)
		for _, r := range rs {
			m := r.(map[string]any)
			res, _ := m["resources"].([]any)
			if m["policy"] == policy && len(res) > 0 && res[0].(map[string]any)["uid"] == uid {
				return fmt.Sprint(m["result"])
			}
		}
	}
	return ""
}

// cpuSeconds is a process's user and system CPU time so far.
func cpuSeconds(t *testing.T, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
