// Package notify holds subscribers to a stream of changes: who is told of
// each change (Add) until they leave, each called in turn (Notify).
package notify

import (
	"maps"
	"slices"
	"sync"
)

// Subscribers are the functions told of each change of type T. The zero
// value is ready; it is safe for concurrent use.
type Subscribers[T any] struct {
	mu   sync.Mutex
	fs   map[int]func(T)
	next int
}

// Add has f called with every change from now on, until remove is called.
func (s *Subscribers[T]) Add(f func(T)) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fs == nil {
		s.fs = map[int]func(T){}
	}
	s.next++
	id := s.next
	s.fs[id] = f
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fs, id)
	}
}

// Notify calls every subscriber with v, outside the lock, so that a
// subscriber may Add or remove.
func (s *Subscribers[T]) Notify(v T) {
	s.mu.Lock()
	fs := slices.Collect(maps.Values(s.fs))
	s.mu.Unlock()
	for _, f := range fs {
		f(v)
	}
}
