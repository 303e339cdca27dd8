package certs

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

func TestReconcileLifecycle(t *testing.T) {
	cfg := AuthorityConfig{DNSNames: []string{"tollgate.tollgate-system.svc"}, CALifetime: 300 * time.Second, ServingLifetime: 90 * time.Second, Overlap: 10 * time.Second}
	t0 := time.Now()
	step := func(data map[string][]byte, at time.Duration) (map[string][]byte, string) {
		t.Helper()
		out, reason, err := Reconcile(data, cfg, t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return out, reason
	}
	serial := func(data map[string][]byte, key string) string {
		return ParseBundle(data[key])[0].SerialNumber.String()
	}

	data, reason := step(nil, 0)
	if !strings.Contains(reason, "created CA") || !strings.Contains(reason, "signed serving certificate") {
		t.Fatalf("first reconcile: %q", reason)
	}
	verify(t, data, "tollgate.tollgate-system.svc", t0)
	ca1, tls1 := serial(data, SecretCACert), serial(data, SecretTLSCert)

	if again, reason := step(data, time.Second); reason != "" || serial(again, SecretTLSCert) != tls1 {
		t.Fatalf("nothing due, yet: %q", reason)
	}
	// Serving certificate: 90s + 9s backdate; due at two thirds, about 57s after issue.
	data, reason = step(data, 60*time.Second)
	if reason != "[signed serving certificate]" || serial(data, SecretTLSCert) == tls1 || serial(data, SecretCACert) != ca1 {
		t.Fatalf("serving renewal: %q", reason)
	}
	// CA: 300s + 30s backdate; due about 190s after creation. Phase 1: the next
	// CA joins the bundle, the old one still signs.
	data, reason = step(data, 195*time.Second)
	if !strings.Contains(reason, "phase 1") || serial(data, SecretCACert) != ca1 || len(ParseBundle(data[SecretCABundle])) != 2 {
		t.Fatalf("phase 1: %q, bundle %d", reason, len(ParseBundle(data[SecretCABundle])))
	}
	next := serial(data, SecretNextCert)
	if d, reason := step(data, 200*time.Second); strings.Contains(reason, "phase 2") || serial(d, SecretCACert) != ca1 {
		t.Fatalf("phase 2 before the overlap: %q", reason)
	}
	// Phase 2 after the overlap: the next CA signs a new serving certificate.
	data, reason = step(data, 206*time.Second)
	if !strings.Contains(reason, "phase 2") || serial(data, SecretCACert) != next || data[SecretNextCert] != nil {
		t.Fatalf("phase 2: %q", reason)
	}
	verify(t, data, "tollgate.tollgate-system.svc", t0.Add(206*time.Second))
	if len(ParseBundle(data[SecretCABundle])) != 2 {
		t.Fatal("the old CA left the bundle before it expired")
	}
	// Once the old CA has expired it leaves the bundle.
	data, reason = step(data, 301*time.Second)
	if !strings.Contains(reason, "expired CA removed") || len(ParseBundle(data[SecretCABundle])) != 1 {
		t.Fatalf("prune: %q", reason)
	}
}

func TestReconcileRepairs(t *testing.T) {
	cfg := AuthorityConfig{DNSNames: []string{"a.svc"}}
	now := time.Now()
	data, _, err := Reconcile(nil, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	data[SecretTLSKey] = []byte("garbage")
	fixed, reason, err := Reconcile(data, cfg, now)
	if err != nil || reason != "[signed serving certificate]" {
		t.Fatalf("%q %v", reason, err)
	}
	verify(t, fixed, "a.svc", now)
	cfg.DNSNames = []string{"a.svc", "b.svc"}
	if _, reason, _ := Reconcile(fixed, cfg, now); reason != "[signed serving certificate]" {
		t.Errorf("new name: %q", reason)
	}
}

func verify(t *testing.T, data map[string][]byte, name string, at time.Time) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(data[SecretCABundle])
	leaf := ParseBundle(data[SecretTLSCert])[0]
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: at}); err != nil {
		t.Errorf("serving certificate does not verify for %s against the bundle: %v", name, err)
	}
}
