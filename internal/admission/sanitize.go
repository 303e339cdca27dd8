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
	MaxWarningBytes = 1024
)

// Sanitize drops control characters and invalid UTF-8 from s and cuts it to
// at most max bytes at a rune boundary, marking the cut.
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
