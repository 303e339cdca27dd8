package imageverify

import (
	"crypto"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Attestor is who may sign an image: one public key, or a keyless
// identity under a trusted root.
type Attestor struct {
	// Name says which attestor verified, or failed to, in results.
	Name string
	// verifier checks signature and attestation tags; nil for a keyless
	// attestor, which reads bundles only.
	verifier signature.Verifier
	// bundles checks Sigstore bundles, and signer says whose they must be.
	bundles *verify.Verifier
	signer  verify.PolicyOption
}

// NewKeyAttestor reads a PEM public key (ECDSA, RSA or ed25519), as
// cosign's `--key` reads one. Signatures over it are checked with SHA-256,
// the hash cosign signs with.
func NewKeyAttestor(name, publicKeyPEM string) (Attestor, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(strings.TrimSpace(publicKeyPEM)))
	if err != nil {
		return Attestor{}, fmt.Errorf("reading the public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return Attestor{}, fmt.Errorf("loading the public key: %w", err)
	}
	// A key needs no timestamps, as for cosign verify --key.
	key := root.NewExpiringKey(v, time.Time{}, time.Time{})
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
	bundles, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return Attestor{}, fmt.Errorf("preparing the verifier: %w", err)
	}
	return Attestor{Name: name, verifier: v, bundles: bundles, signer: verify.WithKey()}, nil
}
