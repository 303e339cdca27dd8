package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/audit"
)

// TestAuditProgress: nothing before progressDelay, nor ever off a terminal;
// then one rewritten line, cleared at the end.
func TestAuditProgress(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	step := audit.Progress{Resource: "configmaps", Done: 1, Resources: 3, Objects: 40}

	var pipe bytes.Buffer
	off := newProgress(&pipe, clock)
	now = now.Add(time.Minute)
	off.update(step)
	off.done()
	if pipe.Len() != 0 {
		t.Errorf("progress written off a terminal: %q", pipe.String())
	}

	var tty bytes.Buffer
	now = time.Unix(0, 0)
	on := newProgress(&tty, clock)
	on.enabled = true // as on a terminal
	on.update(step)
	if tty.Len() != 0 {
		t.Errorf("progress shown before %s: %q", progressDelay, tty.String())
	}
	now = now.Add(progressDelay)
	on.update(step)
	on.done()
	if want := "\r\x1b[Kaudit: 1/3 resources, 40 objects (configmaps)\r\x1b[K"; tty.String() != want {
		t.Errorf("progress = %q, want %q", tty.String(), want)
	}
}
