package admission

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
)

// ValidJSON checks b is JSON as encoding/json and the apiserver accept it.
// fastjson's validation lets raw control characters through inside string
// values (the fuzzer found it); JSON forbids them, so they are looked for
// separately, in one pass with no allocation.
func ValidJSON(b []byte) error {
	if err := fastjson.ValidateBytes(b); err != nil {
		return err
	}
	if !hasControl(bytes.TrimRight(b, " \t\r\n")) {
		return nil // the usual case: compact JSON, perhaps a final newline
	}
	if i := controlInString(b); i >= 0 {
		return fmt.Errorf("%w at offset %d", errControlInString, i)
	}
	return nil
}

var errControlInString = errors.New("raw control character in a string")

// hasControl tells whether b holds any byte below 0x20, eight bytes at a
// time: a byte x is below 0x20 when x-0x20 borrows and x has no high bit.
func hasControl(b []byte) bool {
	const lows, highs = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-lows)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return true
		}
	}
	return false
}

// controlInString returns the offset of the first byte below 0x20 inside a
// string of b, which must otherwise be valid JSON, or -1.
func controlInString(b []byte) int {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++ // the escaped character, whatever it is
		case c == '"':
			in = !in
		case in && c < 0x20:
			return i
		}
	}
	return -1
}
