package imageverify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

const (
	ciIssuer  = imageverifytest.GitHubIssuer
	ciSubject = imageverifytest.ReleaseWorkflow
)

// TestKeyless signs images keylessly with an in-memory Sigstore (a Fulcio
// CA, a Rekor log, a timestamp authority) and verifies them against its
// trusted root: the identity must match, the certificate must have been
// valid when the log saw the signature, the statement must name the
// image, and an SCT is required unless waived.
func TestKeyless(t *testing.T) {
	host := imageverifytest.Empty(t)
	ss := imageverifytest.NewSigstore(t)
	trusted := []byte(ss.TrustedRoot(t))
	ci := imageverifytest.Signing{Subject: ciSubject, Issuer: ciIssuer}
	provenance := map[string]any{"runDetails": map[string]any{"builder": map[string]any{"id": "https://ci.example.com/builder"}}}
	images := map[string][]imageverifytest.Signing{
		"app:signed":      {ci},
		"app:other-repo":  {{Subject: imageverifytest.ForkWorkflow, Issuer: ciIssuer}},
		"app:other-idp":   {{Subject: ciSubject, Issuer: "https://accounts.example.com"}},
		"app:expired":     {{Subject: ciSubject, Issuer: ciIssuer, LoggedAt: time.Now().Add(time.Hour)}},
		"app:attested":    {ci, {Subject: ciSubject, Issuer: ciIssuer, PredicateType: "https://slsa.dev/provenance/v1", Predicate: provenance}},
		"app:unsigned":    nil,
		"app:about-other": {{Subject: ciSubject, Issuer: ciIssuer, About: "sha256:" + strings.Repeat("ab", 32)}},
	}
	for image, signings := range images {
		imageverifytest.Push(t, host+"/"+image)
		for _, sg := range signings {
			ss.Sign(t, host+"/"+image, sg)
		}
	}
	attestor := func(t *testing.T, id Identity, o KeylessOptions) Attestor {
		a, err := NewKeylessAttestor("release", trusted, id, o)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	exact := Identity{Issuer: ciIssuer, Subject: ciSubject}
	anyWorkflow := Identity{Issuer: ciIssuer, SubjectRegExp: `^https://github\.com/example/app/\.github/workflows/[^/]+@refs/heads/main$`}
	logged := KeylessOptions{TransparencyLog: true}
	prov, err := NewAttestation("provenance", "https://slsa.dev/provenance/v1", []Condition{{Expression: attestationCondition}})
	if err != nil {
		t.Fatal(err)
	}
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	for _, tc := range []struct {
		name, image string
		id          Identity
		o           KeylessOptions
		atts        []Attestation
		want        string // in Reason; "" for verified
	}{
		{name: "signed", image: "app:signed", id: exact, o: logged},
		{name: "by a subject matching the regexp", image: "app:signed", id: anyWorkflow, o: logged},
		{name: "timestamped, no log", image: "app:signed", id: exact},
		{name: "attested", image: "app:attested", id: exact, o: logged, atts: []Attestation{prov}},
		{name: "another subject", image: "app:other-repo", id: exact, o: logged, want: `no matching CertificateIdentity found, last error: expected SAN value "` + ciSubject + `", got "https://github.com/example/fork/`},
		{name: "another subject, by regexp", image: "app:other-repo", id: anyWorkflow, o: logged, want: "expected SAN value to match regex"},
		{name: "another issuer", image: "app:other-idp", id: exact, o: logged, want: "expected issuer value \"" + ciIssuer + "\""},
		{name: "logged after the certificate expired", image: "app:expired", id: exact, o: logged, want: "failed to verify log inclusion: integrated time outside certificate validity"},
		{name: "no SCT", image: "app:signed", id: exact, o: KeylessOptions{TransparencyLog: true, CertificateTransparency: true}, want: "failed to verify signed certificate timestamp: only able to verify 0 SCT entries"},
		{name: "no provenance", image: "app:signed", id: exact, o: logged, atts: []Attestation{prov}, want: "attestation provenance: no https://slsa.dev/provenance/v1 attestation verified by attestor release (found only https://sigstore.dev/cosign/sign/v1)"},
		{name: "a statement about another image", image: "app:about-other", id: exact, o: logged, want: "provided artifact digest does not match any digest in statement"},
		{name: "unsigned", image: "app:unsigned", id: exact, o: logged, want: "no signature found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Requirement{ID: tc.name, Attestors: []Attestor{attestor(t, tc.id, tc.o)}, Attestations: tc.atts}
			wantOutcome(t, v.Verify(context.Background(), host+"/"+tc.image, r), "release", tc.want)
		})
	}
}

// TestKeylessTags: a keyless attestor does not read signature tags, and
// says so.
func TestKeylessTags(t *testing.T) {
	host := imageverifytest.Serve(t)
	a, err := NewKeylessAttestor("release", []byte(imageverifytest.NewSigstore(t).TrustedRoot(t)), Identity{Issuer: ciIssuer, Subject: ciSubject}, KeylessOptions{TransparencyLog: true})
	if err != nil {
		t.Fatal(err)
	}
	o := New(Options{Registries: Registries{Insecure: []string{host}}}).Verify(context.Background(), host+"/app:ecdsa-tag", Requirement{ID: "k", Attestors: []Attestor{a}})
	if o.Verified || !strings.Contains(o.Reason, "a keyless attestor reads Sigstore bundles only") {
		t.Fatalf("%+v", o)
	}
}

func TestNewKeylessAttestorRefuses(t *testing.T) {
	root := []byte(imageverifytest.NewSigstore(t).TrustedRoot(t))
	for _, tc := range []struct {
		name string
		root []byte
		id   Identity
		want string
	}{
		{"not a root", []byte(`{"mediaType": 1}`), Identity{Issuer: ciIssuer, Subject: ciSubject}, "reading the trusted root"},
		{"bad regexp", root, Identity{Issuer: ciIssuer, SubjectRegExp: "("}, "the identity: error parsing regexp"},
		{"no subject", root, Identity{Issuer: ciIssuer}, "the identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewKeylessAttestor("a", tc.root, tc.id, KeylessOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q", err, tc.want)
			}
		})
	}
}
