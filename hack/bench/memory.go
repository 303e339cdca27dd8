package main

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// memory runs the real tollgate binary on its defaults and reads its
// resident memory at idle, during a sustained load (half of it on the
// validate path, half on the mutate path), and after it.
func memory(out io.Writer, root, dir string, roots *x509.CertPool, data []byte, certFile, keyFile string, d time.Duration) error {
	bin, port, err := buildTollgate(root, dir)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--tls-cert-file", certFile, "--tls-private-key-file", keyFile, "--metrics-listen=")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	time.Sleep(3 * time.Second)
	idle, err := rss(cmd.Process.Pid)
	if err != nil {
		return err
	}
	idleParts, err := status(cmd.Process.Pid, "RssAnon:", "RssFile:")
	if err != nil {
		return err
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	done := make(chan result)
	for _, path := range []string{"/validate/require-environment", "/mutate/nginx-sidecar"} {
		go func() { done <- measure(roots, base+path, data, 1000, 32, d) }()
	}
	var results []result
	var peak int64
	var seen []string
	for tick := time.NewTicker(time.Second); ; {
		select {
		case r := <-done:
			if results = append(results, r); len(results) < 2 {
				continue
			}
			time.Sleep(2 * time.Second)
			after, _ := rss(cmd.Process.Pid)
			fmt.Fprintf(out, "\n### Resident memory of `tollgate serve` (embedded defaults)\n\n")
			fmt.Fprintf(out, "| idle | under 2,000 reviews/s (validate and mutate, 1,000/s each) for %s (each second) | peak | 2 s after |\n|---|---|---|---|\n", d)
			fmt.Fprintf(out, "| %s | %s | %s | %s |\n", mib(idle), strings.Join(seen, ", "), mib(peak), mib(after))
			fmt.Fprintf(out, "\nIdle: %s anonymous (heap, stacks), %s of the executable's pages. (%d requests, %d errors)\n",
				mib(idleParts[0]), mib(idleParts[1]), results[0].requests+results[1].requests, results[0].errors+results[1].errors)
			return nil
		case <-tick.C:
			v, err := rss(cmd.Process.Pid)
			if err == nil {
				seen = append(seen, mib(v))
				peak = max(peak, v)
			}
		}
	}
}

// rss reads VmRSS of a process, in bytes.
func rss(pid int) (int64, error) {
	v, err := status(pid, "VmRSS:")
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// status reads sizes (in kB there) from /proc/PID/status, in bytes.
func status(pid int, fields ...string) ([]int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(fields))
	for i, name := range fields {
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
				kb, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil {
					return nil, err
				}
				out[i], found = kb*1024, true
			}
		}
		if !found {
			return nil, fmt.Errorf("no %s for %d", name, pid)
		}
	}
	return out, nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
