package admission

import "testing"

func TestValidJSON(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`{"a":"b\n\t\"\\"}`, true},
		{"{\"a\":\n\t\"b\"}", true},
		{"{\"a\":\"x\x16y\"}", false},
		{"{\"a\":\"line\nbreak\"}", false},
		{"{\"a\x01\":1}", false},
		{`{"a":"\\"}`, true},
		{`{"a":"\\\"\u0016"}`, true},
		{`{"a":}`, false},
	}
	for _, tt := range tests {
		if err := ValidJSON([]byte(tt.in)); (err == nil) != tt.ok {
			t.Errorf("ValidJSON(%q) = %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}

func TestHasControl(t *testing.T) {
	for n := 0; n < 40; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{0x00, 0x09, 0x1f} {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a' + byte(i%26)
				}
				b[pos] = c
				if !hasControl(b) {
					t.Fatalf("missed %#x at %d of %d", c, pos, n)
				}
			}
		}
		clean := make([]byte, n)
		for i := range clean {
			clean[i] = 0x20 + byte(i%0x5f) + byte(i%2)*0x60
		}
		if hasControl(clean) {
			t.Fatalf("false positive in %q", clean)
		}
	}
}
