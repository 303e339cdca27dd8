package imageverify

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// wantOutcome: verified by by when reason is "", else refused with a
// reason containing it; never an error.
func wantOutcome(t *testing.T, o Outcome, by, reason string) {
	t.Helper()
	switch {
	case o.Err != nil:
		t.Fatalf("error %v", o.Err)
	case reason == "" && (!o.Verified || o.Attestor != by):
		t.Fatalf("got %+v, want verified by %s", o, by)
	case reason != "" && (o.Verified || !strings.Contains(o.Reason, reason)):
		t.Fatalf("got %+v, want a reason containing %q", o, reason)
	}
}

func recordedKey(t *testing.T, name string) Attestor {
	t.Helper()
	a, err := NewKeyAttestor(name, imageverifytest.Key(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCosignVerdicts decides every image and key cosign verify was asked
// about and must give cosign's answer (its default mode, which reads both
// signature tags and bundles).
func TestCosignVerdicts(t *testing.T) {
	host := imageverifytest.Serve(t)
	b, err := imageverifytest.Recording.ReadFile("cosign/verdicts.json")
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []cosignVerdict
	if err := json.Unmarshal(b, &verdicts); err != nil {
		t.Fatal(err)
	}
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	compared, verified := 0, 0
	for _, c := range verdicts {
		if c.Bundle {
			continue // cosign's --new-bundle-format reads bundles only
		}
		compared++
		o := v.Verify(context.Background(), host+"/"+c.Image, Requirement{ID: c.Key, Attestors: []Attestor{recordedKey(t, c.Key)}})
		if o.Err != nil {
			t.Errorf("%s with %s: %v", c.Image, c.Key, o.Err)
			continue
		}
		if o.Verified != c.Verified {
			t.Errorf("%s with key %s: verified %t, cosign %t (%s); tollgate: %s", c.Image, c.Key, o.Verified, c.Verified, c.Output, o.Reason)
		}
		if o.Verified {
			verified++
		}
	}
	if compared < 30 || verified < 5 {
		t.Fatalf("compared %d cases, %d verified: the recording is too small", compared, verified)
	}
}

// TestReasons: what a user reads when an image does not verify, and an
// unreachable registry is an error (the policy's failurePolicy decides),
// never a verdict.
func TestReasons(t *testing.T) {
	host := imageverifytest.Serve(t)
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	ecdsa := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	both := Requirement{ID: "both", Attestors: []Attestor{recordedKey(t, "stranger"), recordedKey(t, "ecdsa")}}
	for _, tc := range []struct {
		image string
		r     Requirement
		want  string // in Reason; "" for verified
		by    string
	}{
		{image: "app:ecdsa-tag", r: ecdsa, by: "ecdsa"},
		{image: "app:ecdsa-bundle", r: ecdsa, by: "ecdsa"},
		{image: "other:both", r: both, by: "ecdsa"},
		{image: "app:unsigned", r: ecdsa, want: "no signature found"},
		{image: "app:moved", r: ecdsa, want: `the signed payload is for digest "sha256:`},
		{image: "app:rsa-tag", r: ecdsa, want: "no signature verified by attestor ecdsa (tag sha256-"},
		{image: "app:rsa-bundle", r: both, want: "no signature verified by any of the attestors stranger, ecdsa (referrer sha256:"},
		{image: "app:nosuchtag", r: ecdsa, want: "the registry has no image 127.0.0.1:"},
		{image: "Not A Ref", r: ecdsa, want: "is not a valid reference"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			image := host + "/" + tc.image
			if strings.Contains(tc.image, " ") {
				image = tc.image
			}
			wantOutcome(t, v.Verify(context.Background(), image, tc.r), tc.by, tc.want)
		})
	}
}

func TestCache(t *testing.T) {
	host := imageverifytest.Serve(t)
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	for _, image := range []string{"app:ecdsa-tag", "app:unsigned"} {
		first := v.Verify(context.Background(), host+"/"+image, r)
		second := v.Verify(context.Background(), host+"/"+image, r)
		if first.Cached || !second.Cached || first.Verified != second.Verified || first.Reason != second.Reason {
			t.Errorf("%s: first %+v, second %+v: want the second from the cache, the same", image, first, second)
		}
	}
	// Another requirement is another entry.
	other := v.Verify(context.Background(), host+"/app:ecdsa-tag", Requirement{ID: "rsa", Attestors: []Attestor{recordedKey(t, "rsa")}})
	if other.Cached || other.Verified {
		t.Errorf("another requirement: %+v, want checked anew and refused", other)
	}
}

func TestRegistryDown(t *testing.T) {
	srv := httptest.NewServer(nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	for _, image := range []string{host + "/app:1", host + "/app@sha256:" + strings.Repeat("a", 64)} {
		o := v.Verify(context.Background(), image, r)
		if o.Err == nil || o.Verified || !strings.Contains(o.Err.Error(), "connection refused") {
			t.Errorf("%s: %+v, want an error saying the registry cannot be reached", image, o)
		}
	}
}

type countingObserver struct {
	results []string
	calls   []string
}

func (c *countingObserver) ImageVerified(result string, cached bool) {
	c.results = append(c.results, fmt.Sprintf("%s/%t", result, cached))
}

func (c *countingObserver) RegistryCall(op string, _ time.Duration, err error) {
	c.calls = append(c.calls, fmt.Sprintf("%s/%t", op, err == nil))
}

// TestObserver: each verification and registry round is heard, the
// cache's answers without a registry call.
func TestObserver(t *testing.T) {
	host := imageverifytest.Serve(t)
	obs := &countingObserver{}
	v := New(Options{Registries: Registries{Insecure: []string{host}}, Observer: obs})
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	v.Verify(context.Background(), host+"/app:ecdsa-tag", r)
	v.Verify(context.Background(), host+"/app:ecdsa-tag", r)
	v.Verify(context.Background(), "127.0.0.1:1/app:1", r)
	if got, want := strings.Join(obs.results, " "), "verified/false verified/true error/false"; got != want {
		t.Errorf("results %q, want %q", got, want)
	}
	if got, want := strings.Join(obs.calls, " "), "resolve/true signatures/true resolve/false"; got != want {
		t.Errorf("registry calls %q, want %q", got, want)
	}
}

// predicateTypes are the URIs of cosign's --type names used in the
// recording (cosign's options.PredicateTypeMap).
var predicateTypes = map[string]string{
	"slsaprovenance1": "https://slsa.dev/provenance/v1",
	"vuln":            "https://cosign.sigstore.dev/attestation/vuln/v1",
}

// TestCosignAttestationVerdicts decides every image, key and predicate
// type cosign verify-attestation was asked about, with and without the
// builder policy (builderPolicy in Rego for cosign, attestationCondition
// in CEL here), and must give cosign's answer in its default mode.
func TestCosignAttestationVerdicts(t *testing.T) {
	host := imageverifytest.Serve(t)
	b, err := imageverifytest.Recording.ReadFile("cosign/attestations.json")
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []attestationVerdict
	if err := json.Unmarshal(b, &verdicts); err != nil {
		t.Fatal(err)
	}
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	compared, verified, refusedByPolicy := 0, 0, 0
	for _, c := range verdicts {
		if c.Bundle {
			continue // cosign's --new-bundle-format reads bundles only
		}
		var conds []Condition
		if c.Policy {
			conds = []Condition{{Expression: attestationCondition}}
		}
		att, err := NewAttestation("provenance", predicateTypes[c.Type], conds)
		if err != nil {
			t.Fatal(err)
		}
		r := Requirement{ID: fmt.Sprintf("%s/%s/%t", c.Key, c.Type, c.Policy), Attestors: []Attestor{recordedKey(t, c.Key)},
			NoSignature: true, Attestations: []Attestation{att}}
		o := v.Verify(context.Background(), host+"/"+c.Image, r)
		compared++
		if o.Err != nil {
			t.Errorf("%s with %s: %v", c.Image, c.Key, o.Err)
			continue
		}
		if o.Verified != c.Verified {
			t.Errorf("%s with key %s, type %s, policy %t: verified %t, cosign %t (%s); tollgate: %s",
				c.Image, c.Key, c.Type, c.Policy, o.Verified, c.Verified, c.Output, o.Reason)
		}
		if o.Verified {
			verified++
		}
		if c.Policy && !c.Verified && strings.Contains(c.Output, "validation errors") {
			refusedByPolicy++
		}
	}
	if compared < 50 || verified < 5 || refusedByPolicy < 1 {
		t.Fatalf("compared %d cases, %d verified, %d refused by the policy: the recording is too small", compared, verified, refusedByPolicy)
	}
}

// TestAttestationReasons: a signature and a provenance attestation from
// the CI builder, and what a user reads when either is missing or wrong.
func TestAttestationReasons(t *testing.T) {
	host := imageverifytest.Serve(t)
	v := New(Options{Registries: Registries{Insecure: []string{host}}})
	provenance := func(t *testing.T, conds ...Condition) Attestation {
		a, err := NewAttestation("provenance", predicateTypes["slsaprovenance1"], conds)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	fromCI := Condition{Expression: attestationCondition, Message: "not built by the CI builder"}
	for _, tc := range []struct {
		name, image string
		key         string
		noSignature bool
		conds       []Condition
		want        string // in Reason; "" for verified
	}{
		{name: "signed and attested", image: "app:ecdsa-tag", key: "ecdsa", conds: []Condition{fromCI}},
		{name: "in bundles", image: "app:ecdsa-bundle", key: "ecdsa", conds: []Condition{fromCI}},
		{name: "bundles judge an image that has both", image: "other:both", key: "ecdsa", conds: []Condition{fromCI}},
		{name: "attested, not signed", image: "app:attested-only", key: "ecdsa", want: "no signature verified by attestor ecdsa (the image has attestations only)"},
		{name: "attestations alone", image: "app:attested-only", key: "ecdsa", noSignature: true, conds: []Condition{fromCI}},
		{name: "another builder", image: "app:rsa-bundle", key: "rsa", want: "attestation provenance: the https://slsa.dev/provenance/v1 attestation at referrer sha256:",
			conds: []Condition{fromCI}},
		{name: "the message said", image: "app:rsa-bundle", key: "rsa", want: "signed by rsa: not built by the CI builder", conds: []Condition{fromCI}},
		{name: "no such field", image: "app:ecdsa-tag", key: "ecdsa", want: `the condition "predicate.noSuchField == 1" could not be evaluated on the predicate: no such key: noSuchField`,
			conds: []Condition{{Expression: "predicate.noSuchField == 1"}}},
		{name: "condition without message", image: "app:ecdsa-tag", key: "ecdsa", want: "the predicate does not meet predicate.runDetails.builder.id == ''",
			conds: []Condition{{Expression: "predicate.runDetails.builder.id == ''"}}},
		{name: "the wrong predicate type", image: "app:rsa-tag", key: "rsa",
			want: "no https://slsa.dev/provenance/v1 attestation verified by attestor rsa (found only https://cosign.sigstore.dev/attestation/vuln/v1)"},
		{name: "the wrong key", image: "app:ecdsa-tag", key: "rsa", noSignature: true, want: "the envelope does not verify with the key"},
		{name: "another image's attestation", image: "app:moved-att", key: "ecdsa", noSignature: true, want: "the statement is not about sha256:"},
		{name: "nothing signed", image: "app:unsigned", key: "ecdsa", noSignature: true, want: "no signature or attestation found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Requirement{ID: tc.name, Attestors: []Attestor{recordedKey(t, tc.key)}, NoSignature: tc.noSignature,
				Attestations: []Attestation{provenance(t, tc.conds...)}}
			wantOutcome(t, v.Verify(context.Background(), host+"/"+tc.image, r), tc.key, tc.want)
		})
	}
}

func TestNewAttestationRefuses(t *testing.T) {
	for expr, want := range map[string]string{
		"predicate.":      "Syntax error",
		"'a'":             "must be a bool, not string",
		"undeclared == 1": "undeclared reference to 'undeclared'",
		"size(predicate)": "must be a bool, not int",
	} {
		_, err := NewAttestation("a", "https://slsa.dev/provenance/v1", []Condition{{Expression: expr}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", expr, err, want)
		}
	}
}

// TestRegistryCA: a registry over TLS whose certificate chains to a CA
// of its own is reached with that CA as RootCAs, and is an error (never a
// verdict) without it.
func TestRegistryCA(t *testing.T) {
	host, caPEM := imageverifytest.ServeTLS(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA")
	}
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	if o := New(Options{Registries: Registries{RootCAs: pool}}).Verify(context.Background(), host+"/app:ecdsa-tag", r); !o.Verified || o.Err != nil {
		t.Errorf("with the CA: %+v, want verified", o)
	}
	o := New(Options{}).Verify(context.Background(), host+"/app:ecdsa-tag", r)
	if o.Err == nil || o.Verified || !strings.Contains(o.Err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %+v, want an error naming the unknown authority", o)
	}
}
