package backgroundaudit

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

func pod(mutate func(m map[string]any)) *unstructured.Unstructured {
	m := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "a", "resourceVersion": "1", "labels": map[string]any{"app": "x"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		"status": map[string]any{"phase": "Pending"},
	}
	if mutate != nil {
		mutate(m)
	}
	return &unstructured.Unstructured{Object: m}
}

func meta(m map[string]any) map[string]any { return m["metadata"].(map[string]any) }

var podResource = audit.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}

// kept is an object as an informer holds it while policies read every field.
func kept(u *unstructured.Unstructured) *held {
	if u == nil {
		return nil
	}
	h, err := strip{}.hold(podResource)(u)
	if err != nil {
		panic(err)
	}
	return h.(*held)
}

func TestChanged(t *testing.T) {
	tests := []struct {
		name string
		cur  *unstructured.Unstructured
		want bool
	}{
		{"same", pod(nil), false},
		// Kept only when a policy may read it (strip.go).
		{"status only", pod(func(m map[string]any) { m["status"] = map[string]any{"phase": "Running"} }), true},
		{"resourceVersion only", pod(func(m map[string]any) { meta(m)["resourceVersion"] = "2" }), false},
		// Kept only when a policy may read them (strip.go).
		{"managedFields only", pod(func(m map[string]any) { delete(meta(m), "managedFields") }), true},
		{"a label", pod(func(m map[string]any) { meta(m)["labels"] = map[string]any{"app": "y"} }), true},
		{"an annotation", pod(func(m map[string]any) { meta(m)["annotations"] = map[string]any{"a": "b"} }), true},
		{"the spec", pod(func(m map[string]any) {
			m["spec"] = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1"}}}
		}), true},
		{"deleted", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changed(kept(pod(nil)), kept(tt.cur)); got != tt.want {
				t.Errorf("changed = %v, want %v", got, tt.want)
			}
		})
	}
	// Cut by the informers, as when no policy reads them: a status
	// heartbeat changes nothing held.
	cut := strip{status: true, managedFields: true}
	hold := cut.hold(podResource)
	before, _ := hold(pod(nil))
	after, _ := hold(pod(func(m map[string]any) { m["status"] = map[string]any{"phase": "Running"} }))
	if changed(before.(*held), after.(*held)) {
		t.Error("a status change of objects held without status counts as a change")
	}
}

func TestReported(t *testing.T) {
	obj := &manifest.Object{Name: "p"}
	tests := []struct {
		name    string
		results []engine.Result
		want    []string // policies kept
		keep    bool
	}{
		{"fail and pass kept", []engine.Result{{Policy: "a", Outcome: engine.Fail}, {Policy: "b", Outcome: engine.Pass}}, []string{"a", "b"}, true},
		{"not matching dropped", []engine.Result{{Policy: "a", Outcome: engine.Skip, Message: "does not match the request", NotApplicable: true}, {Policy: "b", Outcome: engine.Warn}}, []string{"b"}, true},
		{"exempted kept", []engine.Result{{Policy: "a", Outcome: engine.Skip, Exception: "x"}}, []string{"a"}, true},
		{"request-dependent kept", []engine.Result{{Policy: "who", Outcome: engine.Skip, Message: audit.DependsMessage("request.userInfo")}}, []string{"who"}, true},
		{"request-dependent but not matching dropped", []engine.Result{{Policy: "who", Outcome: engine.Skip, Message: "does not match the request", NotApplicable: true}}, nil, false},
		{"nothing applies", []engine.Result{{Policy: "a", Outcome: engine.Skip, Message: "namespace kube-system is exempt", NotApplicable: true}}, nil, false},
		{"no results", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, keep := reported(offline.Finding{Object: obj, Results: tt.results})
			var got []string
			for _, r := range f.Results {
				got = append(got, r.Policy)
			}
			if keep != tt.keep || !slices.Equal(got, tt.want) {
				t.Errorf("reported = %v, %v; want %v, %v", got, keep, tt.want, tt.keep)
			}
		})
	}
}

func exc(name string, expires *time.Time) *exception.Exception {
	e := &exception.Exception{Metadata: exception.Metadata{Name: name}}
	if expires != nil {
		e.Spec.ExpiresAt = &metav1.Time{Time: *expires}
	}
	return e
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	past, soon, later := now.Add(-time.Minute), now.Add(time.Second), now.Add(time.Hour)
	tests := []struct {
		name string
		list []*exception.Exception
		next time.Time
		gone []string
	}{
		{"none", nil, time.Time{}, nil},
		{"no expiry", []*exception.Exception{exc("forever", nil)}, time.Time{}, nil},
		{"earliest ahead", []*exception.Exception{exc("later", &later), exc("soon", &soon), exc("past", &past)}, soon, []string{"past"}},
		{"all past", []*exception.Exception{exc("past", &past)}, time.Time{}, []string{"past"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, ok := nextExpiry(tt.list, now)
			if ok != !tt.next.IsZero() || !next.Equal(tt.next) {
				t.Errorf("nextExpiry = %v, %v; want %v", next, ok, tt.next)
			}
			got := keysOf(expired(tt.list, now))
			slices.Sort(got)
			if !slices.Equal(got, tt.gone) {
				t.Errorf("expired = %v, want %v", got, tt.gone)
			}
		})
	}
}

func TestKyvernoExpiredBetween(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := metav1.NewTime(now)
	kyverno := &exception.Exception{Metadata: exception.Metadata{Name: "k"}, Spec: exception.Spec{ExpiresAt: &at}, Kyverno: &exception.Kyverno{Namespace: "shop"}}
	tollgate := exc("t", &now)
	for _, tc := range []struct {
		name     string
		list     []*exception.Exception
		from, to time.Time
		want     bool
	}{
		{"kyverno, in the interval", []*exception.Exception{kyverno}, now.Add(-time.Second), now, true},
		{"kyverno, before it", []*exception.Exception{kyverno}, now, now.Add(time.Second), false},
		{"kyverno, after it", []*exception.Exception{kyverno}, now.Add(-time.Hour), now.Add(-time.Second), false},
		{"tollgate's own", []*exception.Exception{tollgate}, now.Add(-time.Second), now, false},
	} {
		if got := kyvernoExpiredBetween(tc.list, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
