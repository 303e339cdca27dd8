package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
)

// selfSigned makes a CA and serving pair in dir and the pool that trusts it.
func selfSigned(dir string) (certs.SelfSigned, *x509.CertPool, error) {
	ss, err := certs.EnsureSelfSigned(dir, nil, time.Now())
	if err != nil {
		return certs.SelfSigned{}, nil, err
	}
	ca, err := os.ReadFile(ss.CAPath())
	if err != nil {
		return certs.SelfSigned{}, nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	return ss, roots, nil
}

// buildTollgate builds the real binary into dir and finds a free port for it.
func buildTollgate(root, dir string) (bin string, port int, err error) {
	bin = filepath.Join(dir, "tollgate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tollgate")
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("build: %v\n%s", err, msg)
	}
	port, err = freePort()
	return bin, port, err
}
