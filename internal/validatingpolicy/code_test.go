package validatingpolicy

import "testing"

func TestStatusCode(t *testing.T) {
	tests := []struct {
		reason string
		want   int32
	}{
		{"Invalid", 422},
		{"Forbidden", 403},
		{"Unauthorized", 401},
		{"RequestEntityTooLarge", 413},
		{"", 422},
		{"Conflict", 422},
	}
	for _, tt := range tests {
		if got := StatusCode(tt.reason); got != tt.want {
			t.Errorf("StatusCode(%q) = %d, want %d", tt.reason, got, tt.want)
		}
	}
}
