package imageverifytest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"
)

// The names cosign gives a bundle and its signature predicate.
const (
	bundleType    = "application/vnd.dev.sigstore.bundle.v0.3+json"
	signPredicate = "https://sigstore.dev/cosign/sign/v1"
)

// Sigstore is an in-memory Sigstore (sigstore-go's VirtualSigstore: a
// Fulcio CA, a Rekor log, a timestamp authority) that signs images in a
// registry keylessly, as cosign sign --new-bundle-format does.
type Sigstore struct {
	vs *ca.VirtualSigstore
}

// NewSigstore starts one.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs}
}

// TrustedRoot is its trusted root, as JSON.
func (s *Sigstore) TrustedRoot(t testing.TB) string {
	t.Helper()
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.vs.FulcioCertificateAuthorities(), logIDs(t, s.vs.CTLogs()),
		s.vs.TimestampingAuthorities(), logIDs(t, s.vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logIDs gives each log the ID its key names it by. VirtualSigstore's
// logs carry the ID's hex text as the ID, which is fine in memory and
// wrong once written as JSON (logId.keyId holds the bytes).
func logIDs(t testing.TB, logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
	t.Helper()
	out := make(map[string]*root.TransparencyLog, len(logs))
	for id, l := range logs {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		fixed := *l
		fixed.ID = raw
		out[id] = &fixed
	}
	return out
}

// Signing is one keyless signature or attestation.
type Signing struct {
	// Subject and Issuer are the certificate's identity.
	Subject, Issuer string
	// PredicateType and Predicate make an attestation; a signature when
	// empty.
	PredicateType string
	Predicate     any
	// LoggedAt is the Rekor entry's time; the certificate is valid for
	// 10 minutes from now. Zero is in 5 minutes.
	LoggedAt time.Time
	// About is the digest the statement names; zero is the image's own.
	About string
}

// Sign attaches to image (host/repository:tag) a Sigstore bundle of s,
// as a referrer, and returns the image's digest.
func (s *Sigstore) Sign(t testing.TB, image string, sg Signing) string {
	t.Helper()
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	about := desc.Digest.Hex
	if sg.About != "" {
		about = strings.TrimPrefix(sg.About, "sha256:")
	}
	predicateType, predicate := sg.PredicateType, sg.Predicate
	if predicateType == "" {
		predicateType, predicate = signPredicate, map[string]any{}
	}
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": ref.Context().Name(), "digest": map[string]string{"sha256": about}}},
		"predicateType": predicateType,
		"predicate":     predicate,
	})
	if err != nil {
		t.Fatal(err)
	}
	at := sg.LoggedAt
	if at.IsZero() {
		at = time.Now().Add(5 * time.Minute)
	}
	entity, err := s.vs.AttestAtTime(sg.Subject, sg.Issuer, statement, at, true)
	if err != nil {
		t.Fatal(err)
	}
	b := bundleOf(t, entity)
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), bundleType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(b, bundleType), MediaType: bundleType})
	if err != nil {
		t.Fatal(err)
	}
	referrer, ok := mutate.Subject(img, v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest}).(v1.Image)
	if !ok {
		t.Fatal("a referrer that is not an image")
	}
	d, err := referrer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref.Context().Digest(d.String()), referrer); err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

// bundleOf writes what VirtualSigstore made as a v0.3 bundle: the leaf
// certificate, the Rekor entry, the timestamp and the DSSE envelope.
func bundleOf(t testing.TB, e *ca.TestEntity) []byte {
	t.Helper()
	vc, err := e.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		t.Fatal(err)
	}
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	pe := &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType}
	for _, sig := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(sig.Sig)
		if err != nil {
			t.Fatal(err)
		}
		pe.Signatures = append(pe.Signatures, &protodsse.Signature{Sig: raw, Keyid: sig.KeyID})
	}
	entries, err := e.TlogEntries()
	if err != nil {
		t.Fatal(err)
	}
	var tlog []*protorekor.TransparencyLogEntry
	for _, entry := range entries {
		tle := entry.TransparencyLogEntry()
		// VirtualSigstore logs DSSE entries (Rekor's dsse kind, 0.0.1) and
		// leaves the kind out of the entry.
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		tlog = append(tlog, tle)
	}
	stamps, err := e.Timestamps()
	if err != nil {
		t.Fatal(err)
	}
	tvd := &protobundle.TimestampVerificationData{}
	for _, ts := range stamps {
		tvd.Rfc3161Timestamps = append(tvd.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	pb := &protobundle.Bundle{
		MediaType: bundleType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries:               tlog,
			TimestampVerificationData: tvd,
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe},
	}
	out, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Push writes a small image of its own to image (host/repository:tag).
func Push(t testing.TB, image string) {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{Architecture: "amd64", OS: "linux",
		Config: v1.Config{Labels: map[string]string{"dev.tollgate.test": image}}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
}

// The identities Releases signs with: GitHub Actions' issuer, and two
// workflows of two repositories.
const (
	GitHubIssuer    = "https://token.actions.githubusercontent.com"
	ReleaseWorkflow = "https://github.com/example/app/.github/workflows/release.yml@refs/heads/main"
	ForkWorkflow    = "https://github.com/example/fork/.github/workflows/release.yml@refs/heads/main"
)

// Releases pushes two images to host: app:release, signed keylessly by
// ReleaseWorkflow, and app:fork, by ForkWorkflow.
func (s *Sigstore) Releases(t testing.TB, host string) {
	t.Helper()
	for image, subject := range map[string]string{"app:release": ReleaseWorkflow, "app:fork": ForkWorkflow} {
		Push(t, host+"/"+image)
		s.Sign(t, host+"/"+image, Signing{Subject: subject, Issuer: GitHubIssuer})
	}
}

// KeylessPolicy is a tollgate policy named released-images on Pods, for
// host's images, whose one attestor (release) is ReleaseWorkflow under
// s's trusted root; match is more lines for spec.match (indented by four).
func (s *Sigstore) KeylessPolicy(t testing.TB, match, host string) string {
	t.Helper()
	return fmt.Sprintf(`apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: released-images}
spec:
  match:
    resources: [pods]
%s  verifyImages:
    images: ["%s/*"]
    trustedRoot: '%s'
    attestors:
    - name: release
      keyless: {issuer: %q, subject: %q}
      certificateTransparency: Ignore
`, match, host, s.TrustedRoot(t), GitHubIssuer, ReleaseWorkflow)
}
