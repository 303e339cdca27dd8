package jsonscan

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		message string
	}{
		{`{"a":"b\n\t\"\\"}`, true, ""},
		{"{\"a\":\n\t\"b\"}\n", true, ""},
		{"{\"a\":\"x\x16y\"}", false, "invalid character '\\x16' in string"},
		{"{\"a\":\"line\nbreak\"}", false, "in string"},
		{"{\"a\":\"tab\there\"}", false, "in string"},
		{"{\"a\x01\":1}", false, "in string"},
		{`{"a":"\\"}`, true, ""},
		{`{"a":"\\\"\u0016"}`, true, ""},
		{"{\"a\":\"\xff\"}", true, ""}, // invalid UTF-8 is the sanitizer's business
		{`{"a":}`, false, "invalid character '}'"},
		{`{"a":01}`, false, "after object key:value pair"},
		{`{"a":"\x"}`, false, "escape"},
		{`{"a":1} {}`, false, "after top-level value"},
		{`{"a":1`, false, "unexpected end of JSON input"},
		{``, false, "unexpected end of JSON input"},
	}
	for _, tt := range tests {
		err := Valid([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("Valid(%q) = %v, want ok=%v", tt.in, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tt.message) {
			t.Errorf("Valid(%q) = %q, want it to say %q", tt.in, err, tt.message)
		}
	}
}
