package notify

import (
	"slices"
	"testing"
)

func TestSubscribers(t *testing.T) {
	var s Subscribers[string]
	var a, b []string
	removeA := s.Add(func(v string) { a = append(a, v) })
	s.Add(func(v string) { b = append(b, v) })
	s.Notify("one")
	removeA()
	s.Notify("two")
	if !slices.Equal(a, []string{"one"}) || !slices.Equal(b, []string{"one", "two"}) {
		t.Errorf("a %v, b %v: want a told until it left, b of both", a, b)
	}
	// A subscriber may leave while being told.
	var remove func()
	remove = s.Add(func(string) { remove() })
	s.Notify("three")
	s.Notify("four")
}
