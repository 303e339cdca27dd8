package imageverify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/util/cache"
)

// Options configure a Verifier.
type Options struct {
	Registries Registries
	// CacheSize bounds the verifications kept (default 10000).
	CacheSize int
	// TTL is how long a verified digest stays verified (default 10m).
	TTL time.Duration
	// NegativeTTL is how long a digest that did not verify stays so
	// (default 30s): a signature pushed later is seen soon.
	NegativeTTL time.Duration
	// TagTTL is how long a tag's digest is kept (default 30s).
	TagTTL time.Duration
	// Observer, when set, hears of every verification and registry call.
	Observer Observer
}

// Observer hears what a Verifier does, for metrics.
type Observer interface {
	// ImageVerified: one image checked; result is verified, refused or
	// error; cached when the cache answered.
	ImageVerified(result string, cached bool)
	// RegistryCall: one round with a registry (resolve: a tag's digest;
	// signatures: the signature tag and the referrers), how long it took
	// and how it ended.
	RegistryCall(op string, took time.Duration, err error)
}

type noObserver struct{}

func (noObserver) ImageVerified(string, bool)                {}
func (noObserver) RegistryCall(string, time.Duration, error) {}

// Verifier verifies images against requirements, with a cache shared by
// every policy and review that uses it. It is safe for concurrent use.
type Verifier struct {
	registry *registry
	results  *cache.LRUExpireCache
	tags     *cache.LRUExpireCache
	flight   singleflight.Group
	opts     Options
}

// New returns a Verifier.
func New(opts Options) *Verifier {
	if opts.CacheSize <= 0 {
		opts.CacheSize = 10000
	}
	if opts.TTL <= 0 {
		opts.TTL = 10 * time.Minute
	}
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = 30 * time.Second
	}
	if opts.TagTTL <= 0 {
		opts.TagTTL = 30 * time.Second
	}
	if opts.Observer == nil {
		opts.Observer = noObserver{}
	}
	return &Verifier{registry: newRegistry(opts.Registries), results: cache.NewLRUExpireCache(opts.CacheSize),
		tags: cache.NewLRUExpireCache(opts.CacheSize), opts: opts}
}

// Requirement is what an image must have: a signature by one of the
// attestors, and each attestation, signed by one of them. ID names the
// requirement in the cache; two requirements with the same ID must be the
// same (a policy's name and its content's hash).
type Requirement struct {
	ID        string
	Attestors []Attestor
	// NoSignature: the attestations alone are required (an attestation
	// is signed too, over a statement naming the image's digest).
	NoSignature  bool
	Attestations []Attestation
}

// Outcome is what a verification found.
type Outcome struct {
	// Digest is the image's digest (sha256:…), once resolved.
	Digest string
	// Verified: a signature by Attestor verified.
	Verified bool
	Attestor string
	// Reason says why it did not verify, when it did not.
	Reason string
	// Err is set when the image could not be checked (a registry that
	// cannot be reached, a timeout): the policy's failurePolicy decides.
	Err error
	// Cached: the outcome came from the cache.
	Cached bool
}

// Verify checks one image against r.
func (v *Verifier) Verify(ctx context.Context, image string, r Requirement) Outcome {
	o := v.verify(ctx, image, r)
	result := "refused"
	switch {
	case o.Err != nil:
		result = "error"
	case o.Verified:
		result = "verified"
	}
	v.opts.Observer.ImageVerified(result, o.Cached)
	return o
}

func (v *Verifier) verify(ctx context.Context, image string, r Requirement) Outcome {
	ref, err := v.registry.parse(image)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	digest, err := v.digest(ctx, ref)
	if notFound(err) {
		// Not an error: a tag pushed later would be pulled unverified.
		return Outcome{Reason: fmt.Sprintf("the registry has no image %s", ref)}
	}
	if err != nil {
		return Outcome{Err: err}
	}
	key := r.ID + "\x00" + digest
	if o, ok := v.results.Get(key); ok {
		out := o.(Outcome)
		out.Cached = true
		return out
	}
	o, err, _ := v.flight.Do(key, func() (any, error) {
		out := v.check(ctx, ref.Context().Digest(digest), r)
		out.Digest = digest
		switch {
		case out.Err != nil:
		case out.Verified:
			v.results.Add(key, out, v.opts.TTL)
		default:
			v.results.Add(key, out, v.opts.NegativeTTL)
		}
		return out, nil
	})
	if err != nil {
		return Outcome{Digest: digest, Err: err}
	}
	return o.(Outcome)
}

// digest resolves ref, from the cache for a tag seen lately.
func (v *Verifier) digest(ctx context.Context, ref name.Reference) (string, error) {
	if d, ok := ref.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	key := ref.Name()
	if d, ok := v.tags.Get(key); ok {
		return d.(string), nil
	}
	start := time.Now()
	d, err := v.registry.resolve(ctx, ref)
	v.opts.Observer.RegistryCall("resolve", time.Since(start), err)
	if err != nil {
		return "", err
	}
	v.tags.Add(key, d.DigestStr(), v.opts.TagTTL)
	return d.DigestStr(), nil
}

// check fetches d's signatures and attestations and tries each attestor
// on each.
func (v *Verifier) check(ctx context.Context, d name.Digest, r Requirement) Outcome {
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	if r.NoSignature && len(r.Attestations) == 0 {
		return Outcome{Err: errors.New("the requirement asks for neither a signature nor an attestation")}
	}
	start := time.Now()
	sigs, err := v.registry.signatures(ctx, d, len(r.Attestations) > 0)
	v.opts.Observer.RegistryCall("signatures", time.Since(start), err)
	if err != nil {
		return Outcome{Err: err}
	}
	if len(sigs) == 0 && len(r.Attestations) > 0 {
		return Outcome{Reason: "no signature or attestation found (no signature tag, attestation tag or Sigstore bundle)"}
	}
	if len(sigs) == 0 {
		return Outcome{Reason: "no signature found (neither a signature tag nor a Sigstore bundle)"}
	}
	out := Outcome{Verified: true}
	if !r.NoSignature {
		by, why := signatureOf(sigs, r.Attestors, h)
		if by == "" {
			return Outcome{Reason: fmt.Sprintf("no signature verified by %s (%s)", attestorNames(r.Attestors), why)}
		}
		out.Attestor = by
	}
	for _, att := range r.Attestations {
		by, why := attested(ctx, sigs, r.Attestors, att, h)
		if by == "" {
			return Outcome{Reason: fmt.Sprintf("attestation %s: %s", att.Name, why)}
		}
		if out.Attestor == "" {
			out.Attestor = by
		}
	}
	return out
}

// signatureOf is the first attestor whose signature is among sigs, or
// "" and why none verified.
func signatureOf(sigs []signed, attestors []Attestor, h v1.Hash) (string, string) {
	var why []string
	for _, a := range attestors {
		for _, s := range sigs {
			err := s.signatureBy(a, h)
			if err == nil {
				return a.Name, ""
			}
			if !errors.Is(err, errNotSignature) {
				why = append(why, fmt.Sprintf("%s: %v", s.where, err))
			}
		}
	}
	if len(why) == 0 {
		return "", "the image has attestations only"
	}
	return "", strings.Join(why, "; ")
}

// attested is an attestor that signed a statement of att's predicate type
// about the image, or "" and why none did. As cosign verify-attestation
// has it, every verified statement of that type must meet the conditions,
// and at least one must exist.
func attested(ctx context.Context, sigs []signed, attestors []Attestor, att Attestation, h v1.Hash) (string, string) {
	var why, types []string
	by := ""
	for _, s := range sigs {
		for _, a := range attestors {
			st, err := s.statementBy(ctx, a, h)
			if errors.Is(err, errNotAttestation) {
				break
			}
			if err != nil {
				why = append(why, fmt.Sprintf("%s by %s: %v", s.where, a.Name, err))
				continue
			}
			if st.PredicateType != att.PredicateType {
				types = append(types, st.PredicateType)
				break
			}
			if failed := att.failed(st.Predicate); failed != "" {
				return "", fmt.Sprintf("the %s attestation at %s, signed by %s: %s", att.PredicateType, s.where, a.Name, failed)
			}
			if by == "" {
				by = a.Name
			}
			break
		}
	}
	if by != "" {
		return by, ""
	}
	msg := fmt.Sprintf("no %s attestation verified by %s", att.PredicateType, attestorNames(attestors))
	if len(types) > 0 {
		msg += fmt.Sprintf(" (found only %s)", strings.Join(slices.Compact(slices.Sorted(slices.Values(types))), ", "))
	}
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return "", msg
}

func attestorNames(as []Attestor) string {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	if len(names) == 1 {
		return "attestor " + names[0]
	}
	return "any of the attestors " + strings.Join(names, ", ")
}
