package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The files of a self-signed certificate directory.
const (
	CAFile   = "ca.crt"
	CAKey    = "ca.key"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Lifetimes of generated material. Both are renewed once two thirds of their
// lifetime has passed.
const (
	CALifetime      = 5 * 365 * 24 * time.Hour
	ServingLifetime = 365 * 24 * time.Hour
)

// DefaultSANs are always in a self-signed serving certificate.
var DefaultSANs = []string{"localhost", "127.0.0.1"}

// SelfSigned describes the material in a certificate directory.
type SelfSigned struct {
	Dir string
	// CreatedCA and CreatedCert tell what this call generated rather than reused.
	CreatedCA, CreatedCert bool
}

// CAPath is the CA certificate: the caBundle webhook configurations need.
func (s SelfSigned) CAPath() string { return filepath.Join(s.Dir, CAFile) }

// CertPath is the serving certificate.
func (s SelfSigned) CertPath() string { return filepath.Join(s.Dir, CertFile) }

// KeyPath is the serving certificate's private key.
func (s SelfSigned) KeyPath() string { return filepath.Join(s.Dir, KeyFile) }

// EnsureSelfSigned makes dir hold a CA and a serving certificate it signed
// for localhost, 127.0.0.1 and dnsNames. What is there is reused while it is
// valid, not yet due for renewal and covers every name; a new serving
// certificate keeps the CA, so registered caBundles stay right.
func EnsureSelfSigned(dir string, dnsNames []string, now time.Time) (SelfSigned, error) {
	s := SelfSigned{Dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, fmt.Errorf("certificate directory: %w", err)
	}
	sans := sansOf(dnsNames)
	ca, caKey, err := loadCA(dir, now)
	if err != nil {
		if ca, caKey, err = newCA(now); err != nil {
			return s, err
		}
		if err := writePair(filepath.Join(dir, CAFile), filepath.Join(dir, CAKey), ca.Raw, caKey); err != nil {
			return s, err
		}
		s.CreatedCA = true
	}
	if !s.CreatedCA && servingUsable(dir, ca, sans, now) {
		return s, nil
	}
	der, key, err := newServing(ca, caKey, sans, now)
	if err != nil {
		return s, err
	}
	if err := writePair(s.CertPath(), s.KeyPath(), der, key); err != nil {
		return s, err
	}
	s.CreatedCert = true
	return s, nil
}

func sansOf(dnsNames []string) []string {
	sans := slices.Concat(DefaultSANs, dnsNames)
	slices.Sort(sans)
	return slices.Compact(sans)
}

// DueForRenewal tells whether two thirds of the certificate's lifetime have
// passed, or it is not valid yet.
func DueForRenewal(c *x509.Certificate, now time.Time) bool {
	lifetime := c.NotAfter.Sub(c.NotBefore)
	return now.Before(c.NotBefore) || now.After(c.NotBefore.Add(lifetime*2/3))
}

func loadCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	ca, err := readCert(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, nil, err
	}
	key, err := readKey(filepath.Join(dir, CAKey))
	if err != nil {
		return nil, nil, err
	}
	if !ca.IsCA || DueForRenewal(ca, now) || !key.PublicKey.Equal(ca.PublicKey) {
		return nil, nil, fmt.Errorf("CA in %s is not usable", dir)
	}
	return ca, key, nil
}

func servingUsable(dir string, ca *x509.Certificate, sans []string, now time.Time) bool {
	cert, err := readCert(filepath.Join(dir, CertFile))
	if err != nil {
		return false
	}
	key, err := readKey(filepath.Join(dir, KeyFile))
	if err != nil || !key.PublicKey.Equal(cert.PublicKey) || DueForRenewal(cert, now) {
		return false
	}
	return verifies(cert, ca, sans, now)
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	return newCAWith(now, CALifetime)
}

func newCAWith(now time.Time, lifetime time.Duration) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "tollgate-ca"},
		NotBefore:             now.Add(-backdate(lifetime)),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func newServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, sans []string, now time.Time) ([]byte, *ecdsa.PrivateKey, error) {
	return newServingWith(ca, caKey, sans, now, ServingLifetime)
}

func newServingWith(ca *x509.Certificate, caKey *ecdsa.PrivateKey, sans []string, now time.Time, lifetime time.Duration) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: sans[0]},
		NotBefore:    now.Add(-backdate(lifetime)),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, s := range sans {
		if ip := net.ParseIP(s); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, s)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create serving certificate: %w", err)
	}
	return der, key, nil
}

// backdate is how far NotBefore lies in the past, for clocks slightly behind:
// a minute, or a tenth of very short lifetimes.
func backdate(lifetime time.Duration) time.Duration { return min(time.Minute, lifetime/10) }

func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	// The key first: a reader that sees the new certificate also finds its key.
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", keyPath, err)
	}
	if err := writeFileAtomic(certPath, encodeCert(der), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", certPath, err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}
