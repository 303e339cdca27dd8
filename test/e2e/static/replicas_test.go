//go:build e2e

package static

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// replica is one `tollgate serve --registration=static` process, serving
// the certificate files in its own directory.
type replica struct {
	bin, addr, servDir, logFile string
	args                        []string
	cmd                         *exec.Cmd
}

func newReplica(t *testing.T, bin, work, name, pki, policies string) *replica {
	t.Helper()
	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{bin: bin, addr: fmt.Sprintf("127.0.0.1:%d", port), servDir: filepath.Join(work, name), logFile: filepath.Join(work, name+".log")}
	if err := os.MkdirAll(r.servDir, 0o700); err != nil {
		t.Fatal(err)
	}
	r.useCertificate(t, pki)
	r.args = []string{"serve",
		"--listen", r.addr,
		"--registration", "static",
		"--tls-cert-file", filepath.Join(r.servDir, certs.CertFile),
		"--tls-private-key-file", filepath.Join(r.servDir, certs.KeyFile),
		"--ca-file", filepath.Join(pki, certs.CAFile),
		"--config", policies,
		"--config-reload-interval", "200ms",
		"--namespace", "tollgate-system",
		"--shutdown-drain-delay", "1s",
		"--metrics-listen=",
	}
	return r
}

// useCertificate copies the serving pair in dir into the replica's files.
func (r *replica) useCertificate(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{certs.CertFile, certs.KeyFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.servDir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// start runs the replica and waits until it is ready.
func (r *replica) start(t *testing.T, roots *x509.CertPool) {
	t.Helper()
	logf, err := os.OpenFile(r.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(r.bin, r.args...)
	r.cmd.Env = framework.ProcessEnv()
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	framework.WaitFor(t, 30*time.Second, "tollgate at "+r.addr+" ready", func() bool {
		resp, err := client.Get("https://" + r.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// stop sends SIGTERM and waits for the process to exit.
func (r *replica) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	_ = r.cmd.Wait()
	r.cmd = nil
}

// log is the replica's log so far.
func (r *replica) log() string {
	b, _ := os.ReadFile(r.logFile)
	return string(b)
}

// forwarder is the one address the static manifests name, in front of
// several replicas, as a Service's virtual IP is: it passes each TCP
// connection (TLS and all) to the first replica that accepts it, trying
// them in turn from a rotating start.
type forwarder struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	wg       sync.WaitGroup
}

func newForwarder(t *testing.T, backends ...string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln, backends: backends}
	f.wg.Go(f.serve)
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	for {
		client, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() { f.pass(client) })
	}
}

func (f *forwarder) pass(client net.Conn) {
	defer client.Close()
	start := f.next.Add(1)
	var backend net.Conn
	for i := range f.backends {
		c, err := net.DialTimeout("tcp", f.backends[(int(start)+i)%len(f.backends)], time.Second)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		return
	}
	defer backend.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(backend, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, backend); done <- struct{}{} }()
	<-done // either side closing ends the pair
}

// tail is the end of a log, for failure messages.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
