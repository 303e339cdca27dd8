package cel_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentEvaluate: a compiled program is shared by the server's
// concurrent reviews (its memoized bounds, its counters, the direct
// evaluator's pooled frames, the tracked validator compiled on first
// use). Fresh programs evaluated from several goroutines at once, each on
// its own inputs, decide as the apiserver's validator does, and their
// bounds hold. make unit runs this test under the race detector; the other
// tests of this package evaluate in one goroutine, where the detector has
// nothing to find, and run without it.
func TestConcurrentEvaluate(t *testing.T) {
	var programs []named
	for _, p := range append(append(libraryPrograms(t), corpusPrograms(t)...), refinedPrograms(t)...) {
		if !strings.HasPrefix(p.name, "budget.yaml: ") { // each costs a second
			programs = append(programs, p)
		}
	}
	all := inputs(t)
	all["windows Pod adding SYS_ADMIN"] = addingPod(t, "windows", "SYS_ADMIN")
	names := []string{"review-pod-create.json", "review-pod-update.json", "deployment", "windows Pod adding SYS_ADMIN"}
	var wg sync.WaitGroup
	for g := range len(names) {
		wg.Go(func() {
			// Each goroutine takes two inputs, each input two goroutines,
			// in another order, so that the same programs meet different
			// sizes at once.
			for _, name := range []string{names[g], names[(g+1)%len(names)]} {
				what := fmt.Sprintf("%s (goroutine %d)", name, g)
				compare(t, programs, what, all[name])
				checkFast(t, programs, what, all[name])
			}
		})
	}
	wg.Wait()
	var fast int64
	for _, p := range programs {
		fast += p.p.FastAdmits()
	}
	if fast == 0 {
		t.Errorf("no evaluation took the fast path: the shared state was not exercised")
	}
}
