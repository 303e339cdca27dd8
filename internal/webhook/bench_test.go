package webhook

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// The stages of one review, on the Pod CREATE review captured from
// kube-apiserver 1.37 (16 KB): go test ./internal/webhook -bench . -benchmem

func captured(b *testing.B) []byte {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecode(b *testing.B) {
	body := captured(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := admission.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	set, err := policy.LoadDefaults()
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(set, engine.Options{})
	review, err := admission.Decode(captured(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range set.Groups {
		b.Run(g.Path(), func(b *testing.B) {
			for b.Loop() {
				if resp := e.Review(context.Background(), g, &review.Request); !resp.Allowed {
					b.Fatal(resp)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	resp := admission.Allowed()
	for b.Loop() {
		if _, err := admission.Encode(admission.VersionV1, "e690caee-952b-4ea0-b078-b49991e43ad1", resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRespond is a whole review without the network: decode, match,
// evaluate, patch, encode and the log line.
func BenchmarkRespond(b *testing.B) {
	set, err := policy.LoadDefaults()
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(set, engine.Options{})
	body := captured(b)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, g := range set.Groups {
		b.Run(g.Path(), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			h := e.Handler(g)
			for b.Loop() {
				if r := Respond(context.Background(), h, body, log); r.Status != 200 {
					b.Fatal(r.Status)
				}
			}
		})
	}
}
