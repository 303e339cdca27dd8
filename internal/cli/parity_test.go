package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/replica"
	"github.com/tollgate-dev/tollgate/internal/server"
)

// reviewCorpus returns named review bodies: the captured ones, and variants
// that are denied, injected, exempt, malformed in shape, and in v1beta1.
func reviewCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	corpus := map[string][]byte{}
	for _, name := range []string{"create", "update", "delete"} {
		b, err := os.ReadFile(filepath.Join("..", "admission", "testdata", "review-pod-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		corpus[name] = b
	}
	create := string(corpus["create"])
	variants := map[string]string{
		"staging":   strings.Replace(create, `"environment":"prod"`, `"environment":"staging"`, 1),
		"no-label":  strings.Replace(create, `"environment":"prod",`, ``, 1),
		"system":    strings.ReplaceAll(create, `"namespace":"shop"`, `"namespace":"kube-system"`),
		"status":    strings.Replace(create, `"operation":"CREATE"`, `"subResource":"status","operation":"CREATE"`, 1),
		"opted-out": strings.Replace(create, `"prometheus.io/path":"/metrics"`, `"prometheus.io/path":"/metrics","tollgate.dev/inject":"off"`, 1),
		"bad-shape": strings.Replace(create, `"spec":{"volumes"`, `"spec":"oops","x":{"volumes"`, 1),
	}
	for name, body := range variants {
		if body == create {
			t.Fatalf("variant %s did not change the review", name)
		}
		corpus[name] = []byte(body)
	}
	for name, body := range map[string][]byte{"create": corpus["create"], "staging": corpus["staging"], "update": corpus["update"]} {
		corpus[name+"-v1beta1"] = bytes.Replace(body, []byte(`"apiVersion":"admission.k8s.io/v1"`), []byte(`"apiVersion":"admission.k8s.io/v1beta1"`), 1)
	}
	return corpus
}

// TestReviewParity sends every review of the corpus to a running server and
// to `tollgate review`, on every path: the answers must be the same bytes.
func TestReviewParity(t *testing.T) {
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := certs.EnsureSelfSigned(t.TempDir(), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	src, err := certs.NewFileSource(ss.CertPath(), ss.KeyPath(), time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Routes: replica.Routes(engine.New(set, engine.Options{})), Certificates: src, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.ServeListener(ctx, ln) }()
	ca, _ := os.ReadFile(ss.CAPath())
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}

	dir := t.TempDir()
	compared := 0
	for name, body := range reviewCorpus(t) {
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, body, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, g := range set.Groups {
			resp, err := client.Post("https://"+ln.Addr().String()+g.Path(), "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			fromServer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, fromCLI, stderr := run("review", "-f", file, "--path", g.Path())
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: server answered %d", name, g.Path(), resp.StatusCode)
			}
			if fromCLI != string(fromServer) {
				t.Errorf("%s on %s differs:\nserver: %s\nreview: %s (exit %d, %s)", name, g.Path(), fromServer, fromCLI, code, stderr)
			}
			compared++
		}
	}
	t.Logf("%d answers compared byte for byte", compared)
}
