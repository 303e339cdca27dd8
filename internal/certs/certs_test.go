package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnsureSelfSigned(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	first, err := EnsureSelfSigned(dir, []string{"tollgate.example"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !first.CreatedCA || !first.CreatedCert {
		t.Fatalf("first call created %+v", first)
	}
	ca, cert := read(t, first.CAPath()), read(t, first.CertPath())
	leaf, err := readCert(first.CertPath())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	for _, name := range []string{"localhost", "127.0.0.1", "tollgate.example"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("certificate does not verify for %s: %v", name, err)
		}
	}
	if info, _ := os.Stat(first.KeyPath()); info.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", info.Mode().Perm())
	}

	t.Run("reused while valid", func(t *testing.T) {
		again, err := EnsureSelfSigned(dir, []string{"tollgate.example"}, now.Add(time.Hour))
		if err != nil || again.CreatedCA || again.CreatedCert {
			t.Fatalf("%+v %v", again, err)
		}
		if !bytes.Equal(cert, read(t, again.CertPath())) {
			t.Error("certificate rewritten")
		}
	})
	t.Run("new name: new certificate, same CA", func(t *testing.T) {
		more, err := EnsureSelfSigned(dir, []string{"tollgate.example", "other.example"}, now)
		if err != nil || more.CreatedCA || !more.CreatedCert {
			t.Fatalf("%+v %v", more, err)
		}
		if !bytes.Equal(ca, read(t, more.CAPath())) {
			t.Error("CA replaced: registered caBundles would break")
		}
	})
	t.Run("renewed after two thirds of its lifetime", func(t *testing.T) {
		late, err := EnsureSelfSigned(dir, []string{"tollgate.example", "other.example"}, now.Add(ServingLifetime*2/3+time.Hour))
		if err != nil || late.CreatedCA || !late.CreatedCert {
			t.Fatalf("%+v %v", late, err)
		}
	})
	t.Run("CA renewed when due", func(t *testing.T) {
		later, err := EnsureSelfSigned(dir, nil, now.Add(CALifetime*2/3+time.Hour))
		if err != nil || !later.CreatedCA || !later.CreatedCert {
			t.Fatalf("%+v %v", later, err)
		}
	})
	t.Run("garbage is replaced", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, CAFile), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
		fixed, err := EnsureSelfSigned(dir, nil, now)
		if err != nil || !fixed.CreatedCA {
			t.Fatalf("%+v %v", fixed, err)
		}
	})
}

func TestFileSourceReloads(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sa, err := EnsureSelfSigned(a, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := EnsureSelfSigned(b, []string{"b.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serve := t.TempDir()
	certFile, keyFile := filepath.Join(serve, "tls.crt"), filepath.Join(serve, "tls.key")
	put := func(cert, key string) {
		t.Helper()
		if err := os.WriteFile(certFile, read(t, cert), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, read(t, key), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put(sa.CertPath(), sa.KeyPath())
	src, err := NewFileSource(certFile, keyFile, 10*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	first := src.Leaf().SerialNumber.String()
	if err := src.Healthy(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := src.Healthy(src.Leaf().NotAfter.Add(time.Second)); err == nil {
		t.Error("healthy after expiry")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)

	// A certificate with another pair's key: not taken.
	put(sb.CertPath(), sa.KeyPath())
	time.Sleep(100 * time.Millisecond)
	if got := src.Leaf().SerialNumber.String(); got != first {
		t.Fatal("a mismatched pair replaced the serving certificate")
	}
	put(sb.CertPath(), sb.KeyPath())
	want, _ := readCert(sb.CertPath())
	deadline := time.Now().Add(5 * time.Second)
	for src.Leaf().SerialNumber.Cmp(want.SerialNumber) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("new pair not picked up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := src.GetCertificate(nil)
	if err != nil || got.Leaf.SerialNumber.Cmp(want.SerialNumber) != 0 {
		t.Errorf("GetCertificate serves %v (%v)", got.Leaf.SerialNumber, err)
	}
}

func TestNewFileSourceFailsWithoutPair(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewFileSource(filepath.Join(dir, "no.crt"), filepath.Join(dir, "no.key"), time.Second, nil); err == nil {
		t.Error("started without a certificate")
	}
}

// TestTrustedFileSource: with a trusted bundle (a static manifest's
// caBundle), a pair another CA signed is refused at start and not taken on
// reload, while a renewal by the same CA is.
func TestTrustedFileSource(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sa, err := EnsureSelfSigned(a, []string{"a.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := EnsureSelfSigned(b, []string{"b.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serve := t.TempDir()
	certFile, keyFile := filepath.Join(serve, "tls.crt"), filepath.Join(serve, "tls.key")
	put := func(certPEM, keyPEM []byte) {
		t.Helper()
		if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	trusted := x509.NewCertPool()
	trusted.AppendCertsFromPEM(read(t, sa.CAPath()))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	put(read(t, sb.CertPath()), read(t, sb.KeyPath()))
	if _, err := NewTrustedFileSource(certFile, keyFile, trusted, time.Second, quiet); err == nil || !strings.Contains(err.Error(), "not signed by a CA of the trusted bundle") {
		t.Fatalf("started with another CA's certificate: %v", err)
	}
	put(read(t, sa.CertPath()), read(t, sa.KeyPath()))
	src, err := NewTrustedFileSource(certFile, keyFile, trusted, 10*time.Millisecond, quiet)
	if err != nil {
		t.Fatal(err)
	}
	first := src.Leaf().SerialNumber
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)

	put(read(t, sb.CertPath()), read(t, sb.KeyPath()))
	time.Sleep(100 * time.Millisecond)
	if src.Leaf().SerialNumber.Cmp(first) != 0 {
		t.Fatal("another CA's certificate replaced the serving certificate")
	}
	// The same CA's renewal (a new name makes EnsureSelfSigned issue one).
	renewed, err := EnsureSelfSigned(a, []string{"a2.example"}, time.Now())
	if err != nil || renewed.CreatedCA || !renewed.CreatedCert {
		t.Fatalf("renewal: %+v %v", renewed, err)
	}
	put(read(t, renewed.CertPath()), read(t, renewed.KeyPath()))
	deadline := time.Now().Add(5 * time.Second)
	for src.Leaf().SerialNumber.Cmp(first) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the same CA's renewal not picked up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
