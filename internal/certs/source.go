package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Served holds the certificate a server presents and swaps it atomically:
// a handshake always sees one whole pair, old or new.
type Served struct {
	current atomic.Pointer[loaded]
}

type loaded struct {
	cert            *tls.Certificate
	leaf            *x509.Certificate
	certPEM, keyPEM []byte
}

// Set takes a PEM pair when it differs from the current one and is valid.
func (s *Served) Set(certPEM, keyPEM []byte) (bool, error) {
	if cur := s.current.Load(); cur != nil && bytes.Equal(cur.certPEM, certPEM) && bytes.Equal(cur.keyPEM, keyPEM) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, err
	}
	s.current.Store(&loaded{cert: &pair, leaf: pair.Leaf, certPEM: certPEM, keyPEM: keyPEM})
	return true, nil
}

// GetCertificate is for tls.Config: it always returns the current pair.
func (s *Served) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cur := s.current.Load()
	if cur == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return cur.cert, nil
}

// Leaf returns the current serving certificate, nil before the first.
func (s *Served) Leaf() *x509.Certificate {
	if cur := s.current.Load(); cur != nil {
		return cur.leaf
	}
	return nil
}

// Healthy reports an error when there is no serving certificate, or it has
// expired or is not valid yet.
func (s *Served) Healthy(now time.Time) error {
	leaf := s.Leaf()
	if leaf == nil {
		return errors.New("no serving certificate")
	}
	if now.After(leaf.NotAfter) {
		return fmt.Errorf("serving certificate expired at %s", leaf.NotAfter.Format(time.RFC3339))
	}
	if now.Before(leaf.NotBefore) {
		return fmt.Errorf("serving certificate not valid before %s", leaf.NotBefore.Format(time.RFC3339))
	}
	return nil
}

// FileSource serves the certificate and key in two files and reloads them
// when their content changes. A pair that does not load (a file half-way
// through being replaced, a key that does not match) is not taken: the
// previous pair goes on serving and the next check tries again. Kubernetes
// updates Secret volumes by swapping a symlink, which polling sees like any
// other write.
type FileSource struct {
	Served
	certFile, keyFile string
	interval          time.Duration
	log               *slog.Logger
	// trusted, when set, are the only CAs a pair's certificate may chain to.
	trusted *x509.CertPool
}

// NewFileSource loads the pair once; it fails if the files do not hold a
// valid pair, so a server never starts without a certificate.
func NewFileSource(certFile, keyFile string, interval time.Duration, log *slog.Logger) (*FileSource, error) {
	return NewTrustedFileSource(certFile, keyFile, nil, interval, log)
}

// NewTrustedFileSource is NewFileSource that takes only pairs whose
// certificate chains to a CA in trusted: the CAs a caBundle the apiserver
// holds and tollgate cannot change names (a static manifest's). A renewed
// certificate signed by another CA is not taken, so the apiserver's calls
// go on succeeding with the previous one while it is valid, and the
// refusal is logged; at start it is an error.
func NewTrustedFileSource(certFile, keyFile string, trusted *x509.CertPool, interval time.Duration, log *slog.Logger) (*FileSource, error) {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	s := &FileSource{certFile: certFile, keyFile: keyFile, interval: interval, log: log, trusted: trusted}
	if _, err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Run checks the files every interval until ctx ends.
func (s *FileSource) Run(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, s.interval, false, func(context.Context) (bool, error) {
		changed, err := s.reload()
		switch {
		case err != nil:
			s.log.Warn("serving certificate not reloaded; the previous one stays in use", slog.Any("error", err))
		case changed:
			leaf := s.Leaf()
			s.log.Info("serving certificate reloaded", slog.String("serial", leaf.SerialNumber.String()), slog.Time("notAfter", leaf.NotAfter))
		}
		return false, nil // until ctx ends
	})
}

func (s *FileSource) reload() (bool, error) {
	certPEM, err := os.ReadFile(s.certFile)
	if err != nil {
		return false, fmt.Errorf("read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(s.keyFile)
	if err != nil {
		return false, fmt.Errorf("read key: %w", err)
	}
	if s.trusted != nil {
		if err := verifyChain(certPEM, s.trusted); err != nil {
			return false, fmt.Errorf("%s: %w", s.certFile, err)
		}
	}
	changed, err := s.Set(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("load %s and %s: %w", s.certFile, s.keyFile, err)
	}
	return changed, nil
}

// verifyChain checks that the first certificate of certPEM, with the
// others as intermediates, chains to a CA of trusted for serving.
func verifyChain(certPEM []byte, trusted *x509.CertPool) error {
	chain := ParseBundle(certPEM)
	if len(chain) == 0 {
		return errors.New("no PEM certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: trusted, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return fmt.Errorf("not signed by a CA of the trusted bundle, which the apiserver would refuse: %w", err)
	}
	return nil
}
