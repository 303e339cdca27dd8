package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Keys of the Secret a CertificateAuthority is stored in.
const (
	SecretCABundle  = "ca.crt" // every CA the apiserver must trust: the webhooks' caBundle
	SecretCACert    = "ca-signing.crt"
	SecretCAKey     = "ca-signing.key"
	SecretNextCert  = "ca-next.crt" // present during a CA rotation
	SecretNextKey   = "ca-next.key"
	SecretNextSince = "ca-next.since" // RFC 3339: when the next CA joined the bundle
	SecretTLSCert   = "tls.crt"
	SecretTLSKey    = "tls.key"
)

// AuthorityConfig sets lifetimes and names of a self-managed authority.
type AuthorityConfig struct {
	DNSNames        []string
	CALifetime      time.Duration
	ServingLifetime time.Duration
	// Overlap is how long a new CA is trusted (in the bundle) before it signs
	// the serving certificate, so every apiserver has seen the new caBundle.
	Overlap time.Duration
}

func (c *AuthorityConfig) defaults() {
	if c.CALifetime <= 0 {
		c.CALifetime = CALifetime
	}
	if c.ServingLifetime <= 0 {
		c.ServingLifetime = ServingLifetime
	}
	if c.Overlap <= 0 {
		c.Overlap = time.Minute
	}
}

// Reconcile returns the Secret data the authority should have at now, and a
// reason when it differs from data. It is pure: the caller stores the result.
//
// The steps, each taken at most once per call:
//   - no CA: create one, trust it, sign a serving certificate;
//   - CA past two thirds of its lifetime: create the next CA and add it to
//     the bundle (phase 1); the old one still signs;
//   - next CA trusted for Overlap: it becomes the signing CA and signs a new
//     serving certificate (phase 2);
//   - serving certificate past two thirds of its lifetime, not signed by the
//     signing CA, or missing a name: sign a new one;
//   - CAs that have expired leave the bundle.
func Reconcile(data map[string][]byte, cfg AuthorityConfig, now time.Time) (map[string][]byte, string, error) {
	cfg.defaults()
	out := map[string][]byte{}
	for k, v := range data {
		out[k] = v
	}
	ca, caKey, err := pair(out, SecretCACert, SecretCAKey)
	var reasons []string
	if err != nil {
		if ca, caKey, err = newCAWith(now, cfg.CALifetime); err != nil {
			return nil, "", err
		}
		if err := putPair(out, SecretCACert, SecretCAKey, ca.Raw, caKey); err != nil {
			return nil, "", err
		}
		out[SecretCABundle] = encodeCert(ca.Raw)
		delete(out, SecretNextCert)
		delete(out, SecretNextKey)
		delete(out, SecretNextSince)
		delete(out, SecretTLSCert)
		reasons = append(reasons, "created CA")
	}
	next, nextKey, nextErr := pair(out, SecretNextCert, SecretNextKey)
	since, sinceErr := time.Parse(time.RFC3339, string(out[SecretNextSince]))
	switch {
	case nextErr == nil && sinceErr == nil && !now.Before(since.Add(cfg.Overlap)):
		ca, caKey = next, nextKey
		if err := putPair(out, SecretCACert, SecretCAKey, ca.Raw, caKey); err != nil {
			return nil, "", err
		}
		delete(out, SecretNextCert)
		delete(out, SecretNextKey)
		delete(out, SecretNextSince)
		reasons = append(reasons, "next CA now signs (CA rotation phase 2)")
	case nextErr != nil && DueForRenewal(ca, now):
		n, nKey, err := newCAWith(now, cfg.CALifetime)
		if err != nil {
			return nil, "", err
		}
		if err := putPair(out, SecretNextCert, SecretNextKey, n.Raw, nKey); err != nil {
			return nil, "", err
		}
		out[SecretNextSince] = []byte(now.UTC().Format(time.RFC3339))
		out[SecretCABundle] = append(bytes.Clone(out[SecretCABundle]), encodeCert(n.Raw)...)
		reasons = append(reasons, "next CA trusted (CA rotation phase 1)")
	}
	bundle := pruneBundle(out[SecretCABundle], ca, now)
	if !bytes.Equal(bundle, out[SecretCABundle]) {
		out[SecretCABundle] = bundle
		reasons = append(reasons, "expired CA removed from the bundle")
	}
	if !servingUsableFor(out, ca, sansOf(cfg.DNSNames), now) {
		der, key, err := newServingWith(ca, caKey, sansOf(cfg.DNSNames), now, cfg.ServingLifetime)
		if err != nil {
			return nil, "", err
		}
		if err := putPair(out, SecretTLSCert, SecretTLSKey, der, key); err != nil {
			return nil, "", err
		}
		reasons = append(reasons, "signed serving certificate")
	}
	if len(reasons) == 0 {
		return out, "", nil
	}
	return out, fmt.Sprint(reasons), nil
}

func pair(data map[string][]byte, certKey, keyKey string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cert, err := parseCert(data[certKey])
	if err != nil {
		return nil, nil, err
	}
	key, err := parseKey(data[keyKey])
	if err != nil {
		return nil, nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New("key does not match certificate")
	}
	return cert, key, nil
}

func putPair(data map[string][]byte, certKey, keyKey string, der []byte, key *ecdsa.PrivateKey) error {
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	data[certKey], data[keyKey] = encodeCert(der), keyPEM
	return nil
}

// pruneBundle drops expired CAs, always keeping the signing CA.
func pruneBundle(bundle []byte, signing *x509.Certificate, now time.Time) []byte {
	var out []byte
	certs := ParseBundle(bundle)
	if !slices.ContainsFunc(certs, signing.Equal) {
		certs = append(certs, signing)
	}
	for _, c := range certs {
		if c.Equal(signing) || now.Before(c.NotAfter) {
			out = append(out, encodeCert(c.Raw)...)
		}
	}
	return out
}

// ParseBundle reads every certificate of a PEM bundle, skipping what is not one.
func ParseBundle(bundle []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			return out
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && block.Type == "CERTIFICATE" {
			out = append(out, c)
		}
	}
}

func servingUsableFor(data map[string][]byte, ca *x509.Certificate, sans []string, now time.Time) bool {
	cert, _, err := pair(data, SecretTLSCert, SecretTLSKey)
	return err == nil && !DueForRenewal(cert, now) && verifies(cert, ca, sans, now)
}

func parseCert(pemBytes []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(pemBytes []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an ECDSA key")
	}
	return ec, nil
}
