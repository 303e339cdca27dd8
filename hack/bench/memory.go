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
// resident memory at idle, during a sustained load, and after it.
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
	url := fmt.Sprintf("https://127.0.0.1:%d/validate/require-environment", port)
	done := make(chan result)
	go func() { done <- measure(roots, url, data, 2000, 64, d) }()
	var peak int64
	var seen []string
	for tick := time.NewTicker(time.Second); ; {
		select {
		case r := <-done:
			time.Sleep(2 * time.Second)
			after, _ := rss(cmd.Process.Pid)
			fmt.Fprintf(out, "\n### Resident memory of `tollgate serve` (embedded defaults)\n\n")
			fmt.Fprintf(out, "| idle | under 2,000 reviews/s for %s (each second) | peak | 2 s after |\n|---|---|---|---|\n", d)
			fmt.Fprintf(out, "| %s | %s | %s | %s |\n", mib(idle), strings.Join(seen, ", "), mib(peak), mib(after))
			fmt.Fprintf(out, "\n(%d requests, %d errors)\n", r.requests, r.errors)
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
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
