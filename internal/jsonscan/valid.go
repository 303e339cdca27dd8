package jsonscan

import (
	"encoding/json"
	"errors"
)

// Valid checks b is JSON as encoding/json and the apiserver accept it:
// RFC 8259, raw control characters in strings refused (fastjson's own
// validation lets them through; the fuzzer found it). The check is
// valid's (validate.go), which answers as encoding/json's Valid does in a
// fraction of its time (BenchmarkValid); encoding/json's decoding runs
// only to say what is wrong.
func Valid(b []byte) error {
	if valid(b) {
		return nil
	}
	var v json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}
