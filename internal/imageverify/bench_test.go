package imageverify

import (
	"context"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// BenchmarkVerify: one image of a registry on loopback, checked anew
// each time by a new Verifier (the tag resolved, the signature tag and
// the referrers fetched, the signature verified), then from the cache, as
// every Pod of a ReplicaSet after the first is.
func BenchmarkVerify(b *testing.B) {
	host := imageverifytest.Serve(b)
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{benchKey(b)}}
	for _, bc := range []struct {
		name   string
		cached bool
		image  string
	}{
		{"uncached-tag-signature", false, "app:ecdsa-tag"},
		{"uncached-bundle", false, "app:ecdsa-bundle"},
		{"cached", true, "app:ecdsa-tag"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v := New(Options{})
			for b.Loop() {
				if !bc.cached {
					v = New(Options{})
				}
				if o := v.Verify(context.Background(), host+"/"+bc.image, r); !o.Verified {
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
