package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"
)

// ClientPair is a CA and a client certificate it signed, PEM encoded: what
// an apiserver presents to a webhook that authenticates it.
type ClientPair struct {
	CA, Cert, Key []byte
}

// NewClientPair makes a CA and a client certificate for commonName, valid
// for lifetime.
func NewClientPair(commonName string, lifetime time.Duration, now time.Time) (*ClientPair, error) {
	ca, caKey, err := newCAWith(now, lifetime)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate client key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-backdate(lifetime)),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create client certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &ClientPair{CA: encodeCert(ca.Raw), Cert: encodeCert(der), Key: keyPEM}, nil
}
