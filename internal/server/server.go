// Package server assembles tollgate's HTTPS server: a table of review paths
// and their handlers, health endpoints, TLS and timeouts, and graceful
// shutdown. What the handlers decide, and which paths there are, is the
// caller's: the server knows nothing of policies.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/webhook"
)

// CertificateSource gives the server its serving certificate.
type CertificateSource interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	Healthy(now time.Time) error
}

// Config configures a Server.
type Config struct {
	Listen string
	// Routes are the review paths served at first; SetRoutes replaces them.
	// A path not in the table is allowed with a warning (see routes).
	Routes       Routes
	Certificates CertificateSource
	Logger       *slog.Logger
	// ShutdownTimeout bounds how long in-flight reviews may take to finish.
	ShutdownTimeout time.Duration
	// DrainDelay is how long the server goes on serving after shutdown
	// begins, with /readyz failing: the first half as before, so that
	// endpoints drop it; the second with keep-alives off, so that the
	// apiserver reconnects elsewhere before the listener closes.
	DrainDelay time.Duration
	// Timeouts bound what a slow or stalled client can hold.
	Timeouts Timeouts
	// Observer is told of every review (metrics); optional.
	Observer webhook.Observer
	// ReadyChecks must all pass for /readyz, beside the certificate's health.
	ReadyChecks []func() error
	// ClientCAs, when set, authenticates the apiserver: review paths answer
	// only clients presenting a certificate these CAs signed. Health paths
	// stay open to probes, which present none.
	ClientCAs *x509.CertPool
	// HTTP2 offers HTTP/2 besides HTTP/1.1. Off by default: the apiserver
	// calls webhooks over HTTP/1.1, and HTTP/2 brings denial-of-service
	// surface of its own (Rapid Reset, CVE-2023-44487).
	HTTP2 bool
}

// Timeouts of the HTTP server. The apiserver sends a whole review at once and
// waits at most 30 seconds, so nothing legitimate comes near them.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

func (c *Config) defaults() {
	if c.Listen == "" {
		c.Listen = ":8443"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 25 * time.Second
	}
	t := &c.Timeouts
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.ReadHeader, 5 * time.Second}, {&t.Read, 15 * time.Second}, {&t.Write, 15 * time.Second}, {&t.Idle, 90 * time.Second}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
}

// Server serves admission reviews over HTTPS.
type Server struct {
	cfg          Config
	http         *http.Server
	shuttingDown atomic.Bool
	// closing: every answer closes its connection (the drain's second half).
	closing atomic.Bool
	current atomic.Pointer[snapshot]
}

// snapshot is one routes table and its review endpoints. A request is
// answered wholly by the snapshot it started with, so a reload never
// answers it with half of one table and half of another.
type snapshot struct {
	paths     []string
	endpoints map[string]http.Handler
}

// New builds the server; nothing listens until Serve.
func New(cfg Config) (*Server, error) {
	cfg.defaults()
	if cfg.Certificates == nil {
		return nil, errors.New("server: a certificate source is required")
	}
	s := &Server{cfg: cfg}
	s.SetRoutes(cfg.Routes)
	s.http = &http.Server{
		Handler:   s.routes(),
		TLSConfig: TLSConfig(cfg.Certificates),
		// A slow or stalled client holds a connection for a bounded time only.
		ReadHeaderTimeout: cfg.Timeouts.ReadHeader,
		ReadTimeout:       cfg.Timeouts.Read,
		WriteTimeout:      cfg.Timeouts.Write,
		IdleTimeout:       cfg.Timeouts.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	if cfg.ClientCAs != nil {
		s.http.TLSConfig.ClientCAs = cfg.ClientCAs
		s.http.TLSConfig.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if cfg.HTTP2 {
		s.http.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
	} else {
		s.http.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	return s, nil
}

// TLSConfig is the listener's TLS: 1.2 or newer, certificates from src.
func TLSConfig(src CertificateSource) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: src.GetCertificate,
		NextProtos:     []string{"http/1.1"},
		CipherSuites: []uint16{ // TLS 1.2 only; 1.3 suites are not configurable and all modern.
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
	}
}

// SetRoutes swaps in a new routes table, atomically.
func (s *Server) SetRoutes(routes Routes) {
	snap := &snapshot{endpoints: make(map[string]http.Handler, len(routes))}
	for _, r := range routes {
		snap.paths = append(snap.paths, r.Path)
		snap.endpoints[r.Path] = webhook.New(r.Handler, webhook.Options{Logger: s.cfg.Logger, Observer: s.cfg.Observer})
	}
	s.current.Store(snap)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// A path not in the table is answered, not refused: during a reload
	// the apiserver may call a replica that has not loaded (or has already
	// dropped) a group the registration names, and a 404 would fail the
	// request under failurePolicy Fail.
	unknown := webhook.New(admission.HandlerFunc(func(ctx context.Context, _ *admission.Request) admission.Response {
		resp := admission.Allowed()
		resp.Warnings = []string{"tollgate: this replica has no policies for this webhook yet; policies are being reloaded"}
		admission.LoggerFrom(ctx).Warn("review for a webhook this replica does not serve; allowed")
		return resp
	}), webhook.Options{Logger: s.cfg.Logger, Observer: s.cfg.Observer})
	review := func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.ClientCAs != nil && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			writeText(w, http.StatusUnauthorized, "a client certificate signed by --client-ca-file is required")
			return
		}
		ep, ok := s.current.Load().endpoints[r.URL.Path]
		if !ok {
			ep = unknown
		}
		ep.ServeHTTP(w, r)
	}
	mux.HandleFunc("/validate/", review)
	mux.HandleFunc("/mutate/", review)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Ready(); err != nil {
			writeText(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.closing.Load() && r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close") // net/http closes after the answer
		}
		mux.ServeHTTP(w, r)
	})
}

// Handler is the server's HTTP handler, for benchmarks that serve it
// with their own listener.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Ready reports why the server should not get traffic, or nil.
func (s *Server) Ready() error {
	if s.shuttingDown.Load() {
		return errors.New("shutting down")
	}
	for _, check := range s.cfg.ReadyChecks {
		if err := check(); err != nil {
			return err
		}
	}
	return s.cfg.Certificates.Healthy(time.Now())
}

// Serve listens and serves until ctx ends, then shuts down gracefully:
// /readyz fails, in-flight reviews finish, idle connections close.
func (s *Server) Serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on a listener the caller opened.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	s.cfg.Logger.Info("serving admission reviews", slog.String("address", ln.Addr().String()), slog.Any("paths", s.Paths()))
	errc := make(chan error, 1)
	go func() { errc <- s.http.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.shuttingDown.Store(true)
	// Two halves. First, serve on as before while the endpoint's removal
	// reaches every apiserver, which then stops choosing this replica.
	// Then every answer closes its connection ("Connection: close"), so the
	// apiserver learns from the answer itself not to reuse it. Idle
	// connections are closed only at the end, with keep-alives turned off:
	// closing one races the apiserver, which reuses them even to a
	// terminating Pod (kubernetes/kubernetes#127335), or behind one address
	// for several replicas (static manifests), and does not retry a failed
	// call; by then the connections it used during the second half are gone.
	s.cfg.Logger.Info("shutting down: draining", slog.Duration("drainDelay", s.cfg.DrainDelay))
	for _, phase := range []func(){func() {}, func() { s.closing.Store(true) }} {
		phase()
		select {
		case <-time.After(s.cfg.DrainDelay / 2):
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		}
	}
	s.http.SetKeepAlivesEnabled(false)
	s.cfg.Logger.Info("shutting down: closing the listener and waiting for in-flight reviews")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.http.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Paths lists the review paths the server answers on, in the table's order.
func (s *Server) Paths() []string { return slices.Clone(s.current.Load().paths) }

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}
