package imageverify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/sigstore/sigstore-go/pkg/bundle"
)

// emptyConfigType is the config of an artifact manifest without one.
const emptyConfigType = "application/vnd.oci.empty.v1+json"

// maxBlob bounds what is read of a signature's layer: cosign's payloads
// and bundles are a few KiB.
const maxBlob = 1 << 20

// Registries is how registries are reached.
type Registries struct {
	// Insecure are registry hosts (host:port) reached over plain HTTP,
	// such as a registry on loopback.
	Insecure []string
	// RootCAs, when set, are the CAs registries' certificates must chain
	// to, instead of the system's.
	RootCAs *x509.CertPool
	// Keychain gives credentials per registry; anonymous when nil.
	Keychain authn.Keychain
}

// registry fetches digests and signatures.
type registry struct {
	insecure []string
	keychain authn.Keychain
	options  []remote.Option
}

func newRegistry(r Registries) *registry {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if r.RootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: r.RootCAs, MinVersion: tls.VersionTLS12}
	}
	kc := r.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain() // anonymous
	}
	return &registry{
		insecure: slices.Clone(r.Insecure),
		keychain: kc,
		options:  []remote.Option{remote.WithTransport(t), remote.WithUserAgent("tollgate"), remote.WithRetryBackoff(remote.Backoff{Steps: 1})},
	}
}

// parse reads an image reference as the kubelet does (docker.io and
// :latest implied).
func (r *registry) parse(ref string) (name.Reference, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image %q is not a valid reference: %w", ref, err)
	}
	if slices.Contains(r.insecure, parsed.Context().RegistryStr()) {
		return name.ParseReference(ref, name.Insecure)
	}
	return parsed, nil
}

// with are the options of calls under ctx: its keychain (WithKeychain)
// before the registry's own.
func (r *registry) with(ctx context.Context) []remote.Option {
	kc := r.keychain
	if own := keychainOf(ctx); own != nil {
		kc = authn.NewMultiKeychain(own, kc)
	}
	return append(slices.Clip(r.options), remote.WithContext(ctx), remote.WithAuthFromKeychain(kc))
}

// resolve is the digest a reference names: its own, or its tag's now.
func (r *registry) resolve(ctx context.Context, ref name.Reference) (name.Digest, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, r.with(ctx)...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("resolving %s: %w", ref, err)
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}

// signatures are the signatures (and, when asked, the attestations) the
// registry holds for d. As cosign verify has it, an image with Sigstore
// bundle referrers (the referrers API, or its tag schema) is judged by
// them alone; an image without, by its signature tag (sha256-….sig) and
// attestation tag (….att).
func (r *registry) signatures(ctx context.Context, d name.Digest, attestations bool) ([]signed, error) {
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return nil, fmt.Errorf("digest %s: %w", d.DigestStr(), err)
	}
	referred, err := r.bundles(ctx, d)
	if err != nil || len(referred) > 0 {
		return referred, err
	}
	out, err := r.tagLayers(ctx, d.Context().Tag(tagOf(h, ".sig")))
	if err != nil || !attestations {
		return out, err
	}
	atts, err := r.tagLayers(ctx, d.Context().Tag(tagOf(h, ".att")))
	return append(out, atts...), err
}

// tagLayers reads a signature or attestation tag: its simple-signing
// layers and DSSE envelope layers.
func (r *registry) tagLayers(ctx context.Context, tag name.Tag) ([]signed, error) {
	img, err := remote.Image(tag, r.with(ctx)...)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", tag, err)
	}
	var out []signed
	for i, l := range m.Layers {
		if l.MediaType != simpleSigningType && l.MediaType != envelopeType {
			continue
		}
		raw, err := blob(img, l.Digest)
		if err != nil {
			return nil, fmt.Errorf("reading %s layer %d: %w", tag, i, err)
		}
		s := signed{where: fmt.Sprintf("tag %s layer %d", tag.TagStr(), i)}
		if l.MediaType == envelopeType {
			s.envelope = raw
		} else {
			s.simple = &simpleSignature{payload: raw, signature: l.Annotations[signatureAnnotation]}
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *registry) bundles(ctx context.Context, d name.Digest) ([]signed, error) {
	idx, err := remote.Referrers(d, r.with(ctx)...)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", d, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", d, err)
	}
	var out []signed
	for _, desc := range m.Manifests {
		if !mayBeBundle(desc.ArtifactType) {
			continue
		}
		img, err := remote.Image(d.Context().Digest(desc.Digest.String()), r.with(ctx)...)
		if err != nil {
			return nil, fmt.Errorf("reading referrer %s: %w", desc.Digest, err)
		}
		manifest, err := img.Manifest()
		if err != nil {
			return nil, fmt.Errorf("reading referrer %s: %w", desc.Digest, err)
		}
		for _, l := range manifest.Layers {
			if string(l.MediaType) != bundleArtifactType {
				continue
			}
			raw, err := blob(img, l.Digest)
			if err != nil {
				return nil, fmt.Errorf("reading referrer %s: %w", desc.Digest, err)
			}
			var b bundle.Bundle
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, fmt.Errorf("referrer %s is not a Sigstore bundle: %w", desc.Digest, err)
			}
			out = append(out, signed{where: "referrer " + desc.Digest.String(), bundle: &b})
		}
	}
	return out, nil
}

// mayBeBundle tells whether a referrer of this artifact type may hold a
// bundle. Registries that take the type from the config (go-containerregistry's
// own) report cosign's bundles as the empty config's type.
func mayBeBundle(artifactType string) bool {
	switch artifactType {
	case bundleArtifactType, "", emptyConfigType:
		return true
	}
	return false
}

// blob reads a layer as stored (cosign's layers are not compressed).
func blob(img v1.Image, h v1.Hash) ([]byte, error) {
	l, err := img.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxBlob+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBlob {
		return nil, fmt.Errorf("layer %s is larger than %d bytes", h, maxBlob)
	}
	return b, nil
}

func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}
