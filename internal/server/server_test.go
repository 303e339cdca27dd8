package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

type testServer struct {
	srv    *Server
	base   string
	client *http.Client
	roots  *x509.CertPool
	stop   func() error
}

func start(t *testing.T) *testServer { return startConfigured(t, nil) }

// startConfigured serves the embedded defaults with a self-signed
// certificate; configure, when given, adjusts the Config first.
func startConfigured(t *testing.T, configure func(*Config)) *testServer {
	t.Helper()
	ss, err := certs.EnsureSelfSigned(t.TempDir(), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	src, err := certs.NewFileSource(ss.CertPath(), ss.KeyPath(), time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Routes: engineRoutes(engine.New(set, engine.Options{})), Certificates: src, Logger: log}
	if configure != nil {
		configure(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	ca, _ := os.ReadFile(ss.CAPath())
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	ts := &testServer{
		srv:    srv,
		base:   "https://" + ln.Addr().String(),
		roots:  roots,
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}},
		stop:   sync.OnceValue(func() error { cancel(); return <-done }),
	}
	t.Cleanup(func() { _ = ts.stop(); ts.client.CloseIdleConnections() })
	return ts
}

// engineRoutes is the table a replica serves: one route per policy group.
// The server does not know the engine; its tests drive it with the real one.
func engineRoutes(eng *engine.Engine) Routes {
	var routes Routes
	for _, g := range eng.Set().Groups {
		routes = append(routes, Route{Path: g.Path(), Handler: eng.Handler(g)})
	}
	return routes
}

func (ts *testServer) get(t *testing.T, path string) (int, string, *http.Response) {
	t.Helper()
	resp, err := ts.client.Get(ts.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

func TestEndpoints(t *testing.T) {
	ts := start(t)
	for _, tt := range []struct {
		path string
		code int
	}{{"/healthz", 200}, {"/readyz", 200}, {"/nope", 404}, {"/validate/unknown-group", 405}} {
		if code, body, _ := ts.get(t, tt.path); code != tt.code {
			t.Errorf("GET %s = %d %s, want %d", tt.path, code, body, tt.code)
		}
	}
	for _, path := range []string{"/validate/require-environment", "/mutate/nginx-sidecar", "/validate/not-loaded-yet"} {
		if code, _, _ := ts.get(t, path); code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s = %d, want 405 from the review endpoint", path, code)
		}
		review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","namespace":"a","kind":{"kind":"Pod","version":"v1"},"resource":{"version":"v1","resource":"pods"},"object":{"metadata":{"name":"p","labels":{"environment":"dev"}},"spec":{"containers":[{"name":"a","image":"b"}]}}}}`
		resp, err := ts.client.Post(ts.base+path, "application/json", strings.NewReader(review))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"allowed":true`) {
			t.Errorf("POST %s = %d %s", path, resp.StatusCode, body)
		}
	}
}

func TestTLS(t *testing.T) {
	ts := start(t)
	addr := strings.TrimPrefix(ts.base, "https://")
	if _, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ts.roots, MaxVersion: tls.VersionTLS11}); err == nil {
		t.Error("TLS 1.1 accepted")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ts.roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p == "h2" {
		t.Error("HTTP/2 negotiated")
	}
	plain, err := http.Get("http://" + addr + "/healthz")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Error("plain HTTP served")
		}
	}
}

func TestShutdownFailsReadiness(t *testing.T) {
	ts := start(t)
	if err := ts.srv.Ready(); err != nil {
		t.Fatal(err)
	}
	if err := ts.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := ts.srv.Ready(); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Ready after shutdown = %v", err)
	}
}

// TestStalledClientsAreCut opens connections that send half a request and
// stop: each is closed after the read timeouts, and meanwhile the server
// answers others.
func TestStalledClientsAreCut(t *testing.T) {
	ts := startConfigured(t, func(c *Config) {
		c.Timeouts = Timeouts{ReadHeader: 300 * time.Millisecond, Read: 500 * time.Millisecond}
	})
	addr := strings.TrimPrefix(ts.base, "https://")
	var conns []*tls.Conn
	for range 50 {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ts.roots})
		if err != nil {
			t.Fatal(err)
		}
		// Headers never finished, or a body promised and never sent.
		if _, err := c.Write([]byte("POST /validate/require-environment HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if code, _, _ := ts.get(t, "/healthz"); code != 200 {
		t.Errorf("healthz = %d while 50 clients stall", code)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("connection %d still open after 5s", i)
				}
				break // closed by the server
			}
		}
		c.Close()
	}
}

// TestGracefulShutdown: once shutdown begins /readyz fails at once, reviews
// are still answered during the drain delay but close their connections,
// and then new connections are refused. A connection left idle since
// before shutdown is not closed under the client during the drain (the
// apiserver reuses it and does not retry): it carries a review in the
// second half, whose answer closes it.
func TestGracefulShutdown(t *testing.T) {
	ts := startConfigured(t, func(c *Config) { c.DrainDelay = 400 * time.Millisecond })
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","namespace":"a","kind":{"kind":"Pod","version":"v1"},"resource":{"version":"v1","resource":"pods"},"object":{"metadata":{"name":"p","labels":{"environment":"dev"}}}}}`
	var reused bool
	post := func() (*http.Response, error) {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost,
			ts.base+"/validate/require-environment", strings.NewReader(review))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		return ts.client.Do(req)
	}
	resp, err := post()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Close {
		t.Fatal("keep-alive off before shutdown")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	time.Sleep(100 * time.Millisecond)
	if code, _, _ := ts.get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz during drain = %d, want 503", code)
	}
	time.Sleep(200 * time.Millisecond) // into the second half: keep-alives off
	resp, err = post()
	if err != nil {
		t.Fatalf("a review during the drain delay failed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("during drain: status %d, Connection: close = %v; want 200 and close", resp.StatusCode, resp.Close)
	}
	if !reused {
		t.Error("the connection idle since before shutdown was closed during the drain")
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := post(); err == nil {
		t.Error("a new connection was accepted after the drain")
	}
}

func TestHTTP2OptIn(t *testing.T) {
	ts := startConfigured(t, func(c *Config) { c.HTTP2 = true })
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.base, "https://"), &tls.Config{RootCAs: ts.roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Errorf("with HTTP2 on, negotiated %q", p)
	}
}

// TestClientCertificates: with client CAs, review paths answer only clients
// with a certificate they signed; health paths stay open to probes.
func TestClientCertificates(t *testing.T) {
	apiserver, err := certs.NewClientPair("kube-apiserver", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := certs.NewClientPair("kube-apiserver", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(apiserver.CA)
	ts := startConfigured(t, func(c *Config) { c.ClientCAs = pool })
	client := func(p *certs.ClientPair) *http.Client {
		cfg := &tls.Config{RootCAs: ts.roots}
		if p != nil {
			pair, err := tls.X509KeyPair(p.Cert, p.Key)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		t.Cleanup(c.CloseIdleConnections)
		return c
	}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","namespace":"a","kind":{"kind":"Pod","version":"v1"},"resource":{"version":"v1","resource":"pods"},"object":{"metadata":{"name":"p","labels":{"environment":"dev"}}}}}`
	for _, tt := range []struct {
		name   string
		client *http.Client
		want   int
	}{{"the apiserver", client(apiserver), 200}, {"no certificate", client(nil), 401}} {
		resp, err := tt.client.Post(ts.base+"/validate/require-environment", "application/json", strings.NewReader(review))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	if _, err := client(stranger).Post(ts.base+"/validate/require-environment", "application/json", strings.NewReader(review)); err == nil {
		t.Error("a certificate from another CA was accepted")
	}
	resp, err := client(nil).Get(ts.base + "/readyz")
	if err != nil {
		t.Fatalf("readyz without a client certificate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("readyz without a client certificate: status %d", resp.StatusCode)
	}
}
