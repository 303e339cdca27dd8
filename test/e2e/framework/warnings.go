package framework

import "sync"

// Warnings collects the warnings the apiserver sends a client (set it as
// the rest.Config's WarningHandler), for a test to take after each request.
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader keeps a warning (rest.WarningHandler).
func (w *Warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// Take returns the warnings kept since the last Take, and forgets them.
func (w *Warnings) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}
