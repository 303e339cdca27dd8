package imageverify

import (
	"context"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// BenchmarkVerify: one image of a registry on loopback, checked anew
// each time by a new Verifier (the tag resolved, the signature tag and
// the referrers fetched, the signature verified; with a provenance
// attestation and its condition too), then from the cache, as
// every Pod of a ReplicaSet after the first is.
func BenchmarkVerify(b *testing.B) {
	host := imageverifytest.Serve(b)
	signed := Requirement{ID: "ecdsa", Attestors: []Attestor{benchKey(b)}}
	prov, err := NewAttestation("provenance", "https://slsa.dev/provenance/v1", []Condition{{Expression: attestationCondition}})
	if err != nil {
		b.Fatal(err)
	}
	attested := Requirement{ID: "ecdsa+provenance", Attestors: []Attestor{benchKey(b)}, Attestations: []Attestation{prov}}
	for _, bc := range []struct {
		name   string
		cached bool
		image  string
		r      Requirement
	}{
		{"uncached-tag-signature", false, "app:ecdsa-tag", signed},
		{"uncached-bundle", false, "app:ecdsa-bundle", signed},
		{"uncached-tag-signature+attestation", false, "app:ecdsa-tag", attested},
		{"uncached-bundle+attestation", false, "app:ecdsa-bundle", attested},
		{"cached", true, "app:ecdsa-tag", signed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v := New(Options{})
			for b.Loop() {
				if !bc.cached {
					v = New(Options{})
				}
				if o := v.Verify(context.Background(), host+"/"+bc.image, bc.r); !o.Verified {
					b.Fatalf("%+v", o)
				}
			}
		})
	}
}

func benchKey(b *testing.B) Attestor {
	a, err := NewKeyAttestor("ecdsa", imageverifytest.Key(b, "ecdsa"))
	if err != nil {
		b.Fatal(err)
	}
	return a
}
