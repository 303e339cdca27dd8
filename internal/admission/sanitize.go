package admission

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on text that reaches users from policy output (messages built by
// CEL from object fields, warnings): the apiserver relays it into API errors,
// HTTP warning headers and terminals.
const (
	MaxMessageBytes = 4096
	// MaxWarningBytes bounds every warning tollgate gives, whatever made it
	// (label and CEL rules, mutations, injection, ValidatingAdmissionPolicies).
	// The apiserver sends a response's warnings as HTTP 299 Warning headers
	// (k8s.io/apiserver/pkg/endpoints/filters/warning.go): whole while they
	// total at most 4096 runes, and once they pass that, every one of them
	// cut to 256 runes, unmarked. At 256 bytes (so at most 256 runes) a
	// warning is never cut by the apiserver, and cut here it ends on a rune
	// and says so.
	MaxWarningBytes = 256
)

// Sanitize drops control characters and invalid UTF-8 from s and cuts it to
// at most max bytes at a rune boundary, marking the cut. It is the one way
// tollgate shortens text.
func Sanitize(s string, max int) string {
	clean := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if len(clean) <= max {
		return clean
	}
	cut := max - len("...")
	for cut > 0 && !utf8.RuneStart(clean[cut]) {
		cut--
	}
	return clean[:cut] + "..."
}

// Warnings returns warnings as tollgate gives them: each sanitized and at
// most MaxWarningBytes long.
//
// The engine bounds them for every command and the codec again for any
// handler, so warnings already in bounds come back as the same slice,
// without allocating; a copy is made only when one changes.
func Warnings(ws []string) []string {
	out := ws
	for i, w := range ws {
		s := Sanitize(w, MaxWarningBytes)
		if s == w {
			continue
		}
		if &out[0] == &ws[0] {
			out = append([]string(nil), ws...)
		}
		out[i] = s
	}
	return out
}
