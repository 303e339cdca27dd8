package imageverify

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// The media types and annotations cosign writes.
const (
	// simpleSigningType is a signature tag's layer: a simple-signing payload.
	simpleSigningType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// signatureAnnotation holds a layer's base64 signature of its payload.
	signatureAnnotation = "dev.cosignproject.cosign/signature"
	// bundleArtifactType is a referrer holding a Sigstore bundle (v0.3).
	bundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// signPredicateType is the in-toto predicate of cosign's signature of
	// an image in a bundle (cosign's types.CosignSignPredicateType).
	signPredicateType = "https://sigstore.dev/cosign/sign/v1"
	// envelopeType is an attestation tag's layer: a DSSE envelope.
	envelopeType = "application/vnd.dsse.envelope.v1+json"
)

// errNotSignature: an attestation, where a signature was looked for.
var errNotSignature = errors.New("an attestation, not a signature")

// errNotAttestation: a signature, where an attestation was looked for.
var errNotAttestation = errors.New("a signature, not an attestation")

// signed is one signature or attestation the registry holds for an image
// digest.
type signed struct {
	// where says where it was found, for reasons: "tag sha256-….sig
	// layer 0" or "referrer sha256:…".
	where string
	// Exactly one of the three forms: a signature tag's layer, an
	// attestation tag's layer (a DSSE envelope), a Sigstore bundle (a
	// signature or an attestation, by its predicate type).
	simple   *simpleSignature
	envelope []byte
	bundle   *bundle.Bundle
}

// simpleSignature is a layer of a signature tag: the payload and its
// signature, as cosign sign writes them without --new-bundle-format.
type simpleSignature struct {
	payload   []byte
	signature string // base64
}

// simplePayload is the part of cosign's simple-signing payload
// (payload.SimpleContainerImage) a verification reads.
type simplePayload struct {
	Critical struct {
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
	} `json:"critical"`
}

// signatureBy checks that this is a signature by a of digest. The error
// says why not, in words a user can act on.
func (s signed) signatureBy(a Attestor, digest v1.Hash) error {
	switch {
	case s.simple != nil:
		return s.simple.verifyWith(a, digest)
	case s.bundle != nil:
		st, err := verifyBundle(s.bundle, a, digest)
		if err != nil {
			return err
		}
		if st.PredicateType != signPredicateType {
			return fmt.Errorf("%w (predicate type %s)", errNotSignature, st.PredicateType)
		}
		return nil
	}
	return errNotSignature
}

// statementBy is the in-toto statement about digest this attestation
// holds, once its signature by a is verified.
func (s signed) statementBy(ctx context.Context, a Attestor, digest v1.Hash) (*statement, error) {
	switch {
	case s.envelope != nil:
		return verifyEnvelope(ctx, s.envelope, a, digest)
	case s.bundle != nil:
		return verifyBundle(s.bundle, a, digest)
	}
	return nil, errNotAttestation
}

// verifyWith is what cosign verify does with a tag signature and a key
// (verifyOCISignature, then SimpleClaimVerifier): the signature over the
// payload bytes, then the payload's digest against the image's.
func (s *simpleSignature) verifyWith(a Attestor, digest v1.Hash) error {
	if a.verifier == nil {
		return errKeylessTags
	}
	raw, err := base64.StdEncoding.DecodeString(s.signature)
	if err != nil {
		return fmt.Errorf("the signature is not base64: %w", err)
	}
	if err := a.verifier.VerifySignature(bytes.NewReader(raw), bytes.NewReader(s.payload)); err != nil {
		return fmt.Errorf("the signature does not verify with the key: %w", err)
	}
	var p simplePayload
	if err := json.Unmarshal(s.payload, &p); err != nil {
		return fmt.Errorf("the signed payload is not cosign's: %w", err)
	}
	if got := p.Critical.Image.DockerManifestDigest; got != digest.String() {
		return fmt.Errorf("the signed payload is for digest %q, not the image's", got)
	}
	return nil
}

// verifyBundle checks a bundle with sigstore-go: a signature by a's key
// or keyless identity, of an in-toto statement whose subject is the
// image digest. It returns the statement.
func verifyBundle(b *bundle.Bundle, a Attestor, digest v1.Hash) (*statement, error) {
	sum, err := hex.DecodeString(digest.Hex)
	if err != nil {
		return nil, fmt.Errorf("the image digest %s: %w", digest, err)
	}
	if _, err := a.bundles.Verify(b, verify.NewPolicy(verify.WithArtifactDigest(digest.Algorithm, sum), a.signer)); err != nil {
		return nil, fmt.Errorf("the bundle does not verify: %w", err)
	}
	env := b.GetDsseEnvelope()
	if env == nil {
		return nil, errors.New("the bundle holds no in-toto statement")
	}
	return parseStatement(env.GetPayload())
}

// tagOf is the tag cosign gives an image's signatures (suffix .sig) or
// attestations (.att): sha256-<hex><suffix>.
func tagOf(digest v1.Hash, suffix string) string {
	return strings.ReplaceAll(digest.String(), ":", "-") + suffix
}
