package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// doc is a label policy named name.
func doc(name string) string {
	return header + "metadata: {name: " + name + "}\nspec:\n  match: {resources: [pods]}\n  validate: {labels: [{key: team}]}\n"
}

func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte(doc("first")), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var loaded []string
	var failures []error
	w := &Watcher{Path: dir, Interval: 50 * time.Millisecond, Loaded: Fingerprint(dir),
		OnLoad:  func(s *Set) { mu.Lock(); loaded = append(loaded, strings.Join(s.Names(), ",")); mu.Unlock() },
		OnError: func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	wait := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			ok := cond()
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out: loaded %v, failures %v", loaded, failures)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(150 * time.Millisecond)
	mu.Lock()
	if len(loaded) != 0 {
		t.Errorf("reloaded without a change: %v", loaded)
	}
	mu.Unlock()

	// Written in place, not atomically: a torn read must not be loaded.
	_ = os.WriteFile(file, []byte(doc("second")), 0o644)
	wait(func() bool { return len(loaded) == 1 && loaded[0] == "second" })

	// A broken set is refused and reported once; nothing is loaded. It is
	// written atomically: on a loaded machine an in-place write can stall for
	// more than an interval, and its torn part is a failure of its own.
	mu.Lock()
	failures = nil
	mu.Unlock()
	replace(t, file, doc("Bad_Name"))
	wait(func() bool { return len(failures) == 1 })
	time.Sleep(150 * time.Millisecond)
	mu.Lock()
	if len(loaded) != 1 || len(failures) != 1 {
		t.Errorf("after a broken change: loaded %v, failures %v", loaded, failures)
	}
	mu.Unlock()

	replace(t, filepath.Join(dir, "q.yaml"), doc("third"))
	replace(t, file, doc("second"))
	wait(func() bool { return len(loaded) == 2 && loaded[1] == "second,third" })
}

// replace writes content to path atomically, as a ConfigMap update does.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A change made after the serving set's fingerprint was taken but before
// Run starts is loaded, not taken for the starting point.
func TestWatcherChangeBeforeRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte(doc("first")), 0o644); err != nil {
		t.Fatal(err)
	}
	loadedFrom := Fingerprint(dir)
	if err := os.WriteFile(file, []byte(doc("second")), 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	w := &Watcher{Path: dir, Interval: 5 * time.Millisecond, Loaded: loadedFrom,
		OnLoad:  func(s *Set) { got <- strings.Join(s.Names(), ",") },
		OnError: func(err error) { t.Errorf("unexpected error: %v", err) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	select {
	case names := <-got:
		if names != "second" {
			t.Errorf("loaded %q, want second", names)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a change made before Run started was never loaded")
	}
}
