package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Every test of the package ends with no goroutine of the server left:
// serving, draining, certificate reloads and policy swaps all stop with it.
// glog, which Gatekeeper's libraries import, starts its flush daemon at init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"))
}

// TestNoLeakAcrossReviewsAndReloads sends rounds of every review kind, with a
// policy swap in each, and requires the live heap after the last round to be
// where it was after the first: a leak of a few hundred bytes per review, or
// of an engine per reload, would show.
func TestNoLeakAcrossReviewsAndReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("rounds of reviews")
	}
	ts := start(t)
	var bodies [][]byte
	for _, f := range []string{"create", "update", "delete"} {
		b, err := os.ReadFile("../admission/testdata/review-pod-" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	paths := []string{"/validate/require-environment", "/mutate/nginx-sidecar"}
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	const rounds, perRound = 6, 300
	heap := make([]uint64, rounds)
	for r := range rounds {
		for i := range perRound {
			body := bodies[i%len(bodies)]
			path := paths[i%len(paths)]
			resp, err := ts.client.Post(ts.base+path, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: HTTP %d", path, resp.StatusCode)
			}
		}
		ts.srv.SetRoutes(engineRoutes(engine.New(set, engine.Options{})))
		heap[r] = liveHeap()
	}
	t.Logf("live heap after each round of %d reviews and a reload: %v", perRound, kib(heap))
	// The first round warms pools and caches; compare the last with the second.
	if grown := int64(heap[rounds-1]) - int64(heap[1]); grown > 256<<10 {
		t.Errorf("live heap grew by %d KiB over %d rounds of %d reviews", grown>>10, rounds-2, perRound)
	}
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func kib(v []uint64) string {
	var b bytes.Buffer
	for i, x := range v {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%dKiB", x>>10)
	}
	return b.String()
}
