package imageverify

import (
	"errors"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// errKeylessTags: a keyless attestor met a signature or attestation tag.
var errKeylessTags = errors.New("a keyless attestor reads Sigstore bundles only, not signature or attestation tags")

// Identity is who a keyless signature must come from: the OIDC issuer
// and the subject (an email or a URI, such as a CI workflow) of the
// signing certificate, each exact or a regular expression (RE2).
type Identity struct {
	Issuer, IssuerRegExp   string
	Subject, SubjectRegExp string
}

// KeylessOptions say what a keyless signature must carry besides a
// certificate from the trusted root's Fulcio.
type KeylessOptions struct {
	// TransparencyLog: a Rekor entry, verified with the root's log keys,
	// whose time falls within the certificate's validity; without it, a
	// timestamp from one of the root's timestamp authorities.
	TransparencyLog bool
	// CertificateTransparency: an SCT from one of the root's CT logs in
	// the certificate, as Fulcio embeds one.
	CertificateTransparency bool
}

// CheckTrustedRoot tells whether a Sigstore trusted root can be read.
func CheckTrustedRoot(trustedRoot []byte) error {
	if _, err := root.NewTrustedRootFromJSON(trustedRoot); err != nil {
		return fmt.Errorf("reading the trusted root: %w", err)
	}
	return nil
}

// NewKeylessAttestor reads a Sigstore trusted root (JSON, as `cosign
// trusted-root create` or the public-good instance's TUF repository
// gives it) and the identity signatures must come from.
func NewKeylessAttestor(name string, trustedRoot []byte, id Identity, o KeylessOptions) (Attestor, error) {
	tr, err := root.NewTrustedRootFromJSON(trustedRoot)
	if err != nil {
		return Attestor{}, fmt.Errorf("reading the trusted root: %w", err)
	}
	identity, err := verify.NewShortCertificateIdentity(id.Issuer, id.IssuerRegExp, id.Subject, id.SubjectRegExp)
	if err != nil {
		return Attestor{}, fmt.Errorf("the identity: %w", err)
	}
	opts := []verify.VerifierOption{verify.WithSignedTimestamps(1)}
	if o.TransparencyLog {
		opts = []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	}
	if o.CertificateTransparency {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(tr, opts...)
	if err != nil {
		return Attestor{}, fmt.Errorf("preparing the verifier: %w", err)
	}
	return Attestor{Name: name, bundles: v, signer: verify.WithCertificateIdentity(identity)}, nil
}
