package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// soak runs the real tollgate binary with the seed policies and the policy
// library for d at rate reviews/s, cycling through every review kind (Pod
// CREATE, UPDATE, DELETE, a 10-container Pod, a Deployment) and every
// webhook path, rewriting a policy file every 30 s so that reloads happen
// under load. It samples resident memory and goroutines every 10 s and fails
// on any error or on memory that keeps growing.
func soak(out io.Writer, root string, d time.Duration, rate int) error {
	dir, err := os.MkdirTemp("", "tollgate-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ss, roots, err := selfSigned(dir)
	if err != nil {
		return err
	}

	// The policies: the seed system and the library, as a user deploys them.
	cfg := filepath.Join(dir, "policies")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		return err
	}
	copies := map[string]string{filepath.Join(root, "examples", "seed-policies.yaml"): "seed-policies.yaml"}
	lib, _ := filepath.Glob(filepath.Join(root, "policies", "*.yaml"))
	for _, f := range lib {
		copies[f] = "library-" + filepath.Base(f)
	}
	for src, name := range copies {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(cfg, name), data, 0o644); err != nil {
			return err
		}
	}
	set, err := policy.LoadPath(cfg)
	if err != nil {
		return err
	}

	bin, port, err := buildTollgate(root, dir)
	if err != nil {
		return err
	}
	mport, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--tls-cert-file", ss.CertPath(), "--tls-private-key-file", ss.KeyPath(),
		"--config", cfg, "--config-reload-interval", "1s",
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport), "--log-level", "error")
	logs, err := os.Create(filepath.Join(dir, "tollgate.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := probe.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tollgate not ready after 30s; see its log")
		}
	}

	// Every review kind to every path.
	kinds, err := reviewKinds(root)
	if err != nil {
		return err
	}
	var targets []vegeta.Target
	for _, g := range set.Groups {
		for _, k := range kinds {
			targets = append(targets, vegeta.Target{Method: http.MethodPost, URL: base + g.Path(), Body: k.data,
				Header: http.Header{"Content-Type": []string{"application/json"}}})
		}
	}

	// Reloads under load: a policy file rewritten (alternately with and
	// without a second document) every 30 s.
	stop := make(chan struct{})
	defer close(stop)
	reloads := 0
	go func() {
		extra := filepath.Join(cfg, "soak-extra.yaml")
		doc := "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: soak-extra}\nspec:\n  match: {resources: [pods]}\n  validate:\n    action: Warn\n    expressions: [{expression: \"object.metadata.name.size() < 200\", message: long name}]\n"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Second):
			}
			if i%2 == 0 {
				_ = os.WriteFile(extra, []byte(doc), 0o644)
			} else {
				_ = os.Remove(extra)
			}
			reloads++
		}
	}()

	type sample struct {
		at         time.Duration
		rss        int64
		goroutines int
	}
	var samples []sample
	start := time.Now()
	take := func() {
		r, _ := rss(cmd.Process.Pid)
		samples = append(samples, sample{time.Since(start).Round(time.Second), r, goroutines(mport)})
	}
	take()
	a := attacker(roots, 64)
	var m vegeta.Metrics
	codes := map[uint16]int{}
	var firstErr string
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	results := a.Attack(vegeta.NewStaticTargeter(targets...), vegeta.ConstantPacer{Freq: rate, Per: time.Second}, d, "soak")
	for done := false; !done; {
		select {
		case res, ok := <-results:
			if !ok {
				done = true
				break
			}
			m.Add(res)
			codes[res.Code]++
			if (res.Code != http.StatusOK || res.Error != "") && firstErr == "" {
				firstErr = fmt.Sprintf("%s: HTTP %d %s %s", res.URL, res.Code, res.Error, strings.TrimSpace(string(res.Body)))
			}
		case <-tick.C:
			take()
		}
	}
	m.Close()
	take()
	errs := int(m.Requests) - codes[http.StatusOK]

	fmt.Fprintf(out, "## Soak (%s, GOMAXPROCS of the load generator and tollgate: shared %d cores)\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU())
	fmt.Fprintf(out, "`tollgate serve` (the real binary) with the seed policies and the library: %d webhook paths × %d review kinds (%s), a policy file rewritten every 30 s (%d reloads).\n\n",
		len(set.Groups), len(kinds), kindNames(kinds), reloads)
	fmt.Fprintf(out, "| duration | rate asked | achieved | requests | errors | p50 | p99 | max |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(out, "| %s | %d/s | %.0f/s | %d | %d | %s | %s | %s |\n\n", d, rate, m.Rate, m.Requests, errs,
		ms(m.Latencies.P50), ms(m.Latencies.P99), ms(m.Latencies.Max))
	fmt.Fprintf(out, "| at | resident memory | goroutines |\n|---|---|---|\n")
	for _, s := range samples {
		fmt.Fprintf(out, "| %s | %s | %d |\n", s.at, mib(s.rss), s.goroutines)
	}
	// Flat: the last third's mean within 15% of the second third's (the
	// first third includes the warm-up of pools and caches).
	third := len(samples) / 3
	mean := func(ss []sample) float64 {
		var sum int64
		for _, s := range ss {
			sum += s.rss
		}
		return float64(sum) / float64(max(len(ss), 1))
	}
	mid, last := mean(samples[third:2*third]), mean(samples[2*third:])
	growth := (last - mid) / mid
	fmt.Fprintf(out, "\nResident memory, mean of the last third against the middle third: %+.1f%%.\n", growth*100)
	if errs > 0 {
		return fmt.Errorf("%d of %d reviews failed; first: %s", errs, m.Requests, firstErr)
	}
	if third > 0 && growth > 0.15 {
		return fmt.Errorf("resident memory grew %.1f%% from the middle to the last third of the soak", growth*100)
	}
	return nil
}

// reviewKinds are the bodies of the benchmark and the captured UPDATE and DELETE.
func reviewKinds(root string) ([]body, error) {
	bs, err := bodies(root)
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"update", "delete"} {
		data, err := os.ReadFile(filepath.Join(root, "internal", "admission", "testdata", "review-pod-"+op+".json"))
		if err != nil {
			return nil, err
		}
		bs = append(bs, body{"Pod " + strings.ToUpper(op), data})
	}
	return bs, nil
}

func kindNames(bs []body) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.name
	}
	return strings.Join(names, ", ")
}

// goroutines reads go_goroutines from tollgate's metrics, -1 if it cannot.
func goroutines(port int) int {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}
