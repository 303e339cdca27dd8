package imageverify

import (
	"crypto"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Attestor is who may sign an image: one public key, or a keyless
// identity under a trusted root.
type Attestor struct {
	// Name says which attestor verified, or failed to, in results.
	Name string
	// Exactly one of the two.
	verifier signature.Verifier
	keyless  *keyless
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
	return Attestor{Name: name, verifier: v}, nil
}
