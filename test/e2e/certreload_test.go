//go:build e2e

package e2e

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestCertificateReplacedOnDiskUnderTraffic replaces the serving certificate
// files in place, as an operator or cert-manager would, while the apiserver
// keeps sending reviews: the new certificate must be served without restart
// and no request may fail.
func TestCertificateReplacedOnDiskUnderTraffic(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	load := framework.StartLoad(2, func(w, i int) error {
		p, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod(fmt.Sprintf("load-%d-%d", w, i), env("dev"), nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && count(p.Spec.Containers, isSidecar) != 1 {
			err = fmt.Errorf("pod came back with %d sidecars", count(p.Spec.Containers, isSidecar))
		}
		return err
	})

	for round := range 3 {
		time.Sleep(300 * time.Millisecond)
		before := servedSerial(t)
		next := t.TempDir()
		for _, f := range []string{certs.CAFile, certs.CAKey} {
			if err := copyFile(filepath.Join(cluster.certDir, f), filepath.Join(next, f)); err != nil {
				t.Fatal(err)
			}
		}
		// A new SAN forces a new serving certificate from the same CA.
		if _, err := certs.EnsureSelfSigned(next, []string{fmt.Sprintf("round-%d.tollgate.test", round)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		// Overwrite in place, not atomically: for a moment the files disagree.
		for _, f := range []string{certs.CertFile, certs.KeyFile} {
			data, err := os.ReadFile(filepath.Join(next, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cluster.servDir, f), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want := mustLeafSerial(t, filepath.Join(next, certs.CertFile))
		deadline := time.Now().Add(10 * time.Second)
		for servedSerial(t) != want {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: still serving %s after 10s, want %s", round, before, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("round %d: serial %s replaced by %s without restart", round, before, want)
	}
	time.Sleep(300 * time.Millisecond)
	attempts, failures, first := load.Stop()
	t.Logf("pod creates through the apiserver during 3 replacements: %d attempted, %d failed", attempts, failures)
	if failures != 0 {
		t.Errorf("%d of %d creates failed; first: %s", failures, attempts, first)
	}
	if attempts < 20 {
		t.Errorf("only %d creates ran: the test did not load the server", attempts)
	}
}

func servedSerial(t *testing.T) string {
	t.Helper()
	conn, err := tls.Dial("tcp", cluster.addr, &tls.Config{RootCAs: cluster.caPool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("dial tollgate: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func mustLeafSerial(t *testing.T, path string) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(path, filepath.Join(filepath.Dir(path), certs.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return pair.Leaf.SerialNumber.String()
}
