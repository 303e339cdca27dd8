package jsonpatch

import (
	"encoding/json"
	"testing"
)

func TestPointer(t *testing.T) {
	tests := []struct {
		segments []string
		want     string
	}{
		{[]string{"spec", "containers", "-"}, "/spec/containers/-"},
		{[]string{"metadata", "annotations", "tollgate.dev/status"}, "/metadata/annotations/tollgate.dev~1status"},
		{[]string{"metadata", "annotations", "a~b/c"}, "/metadata/annotations/a~0b~1c"},
		{[]string{"metadata", "annotations", "~1"}, "/metadata/annotations/~01"},
		{[]string{""}, "/"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Pointer(tt.segments...); got != tt.want {
			t.Errorf("Pointer(%q) = %q, want %q", tt.segments, got, tt.want)
		}
	}
}

func TestMarshal(t *testing.T) {
	p := Patch{Add("/spec/volumes/-", json.RawMessage(`{"name":"v"}`))}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"add","path":"/spec/volumes/-","value":{"name":"v"}}]`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
