package cli

import (
	"strings"
	"testing"
)

// TestCELFastPathFlag: check on a directory of manifests (the Pod
// Security fixtures, against the embedded policies) prints the same
// report with --cel-fast-path=false, where every CEL program decides on
// its tracked path, as with the fast path; and the flag is refused with
// anything but a bool.
func TestCELFastPathFlag(t *testing.T) {
	const dir = "../../policies/testdata/pod-security"
	code, fast, errs := run("check", "-f", dir, "-o", "json")
	if code > 1 || !strings.Contains(fast, `"kind": "Report"`) {
		t.Fatalf("check: exit %d, %.300s %s", code, fast, errs)
	}
	for _, args := range [][]string{{"--cel-fast-path=false"}, {"--cel-fast-path=true"}, {"--cel-fast-path"}} {
		c, out, errs := run(append([]string{"check", "-f", dir, "-o", "json"}, args...)...)
		if c != code || out != fast {
			t.Errorf("check %v: exit %d (want %d), output differs from the fast path's: %s", args, c, code, errs)
		}
	}
	if c, _, _ := run("check", "-f", dir, "--cel-fast-path=maybe"); c != 2 {
		t.Errorf("--cel-fast-path=maybe: exit %d, want 2", c)
	}
}
