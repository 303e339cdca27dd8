package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Watcher reloads the policies at a path when the content of its files
// changes. Polling sees a Kubernetes ConfigMap update (a symlink swap) like
// any other write. A change is loaded once it has held still for one
// interval, so a file caught half-written is never taken for a smaller set.
// A set that does not load is refused: OnError is told and the caller keeps
// serving the previous set.
type Watcher struct {
	Path     string
	Interval time.Duration
	// Loaded is the Fingerprint of Path taken before the serving set was
	// loaded from it, so a change made while it loaded, or before Run
	// starts, is not missed. Empty: Run takes it when it starts.
	Loaded  string
	OnLoad  func(*Set)
	OnError func(error)
}

// Run checks every Interval until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	last := w.Loaded
	if last == "" {
		last = Fingerprint(w.Path)
	}
	pending := last
	_ = wait.PollUntilContextCancel(ctx, w.Interval, false, func(context.Context) (bool, error) {
		fp, err := fingerprint(w.Path)
		switch {
		case fp != pending:
			pending = fp // changed since the last look: wait until it holds still
		case fp == last:
		case err != nil:
			last = fp
			w.OnError(err)
		default:
			last = fp
			if set, err := LoadPath(w.Path); err != nil {
				w.OnError(err)
			} else {
				w.OnLoad(set)
			}
		}
		return false, nil // until ctx ends
	})
}

// Fingerprint identifies the names and contents of the policy files at
// path; a path that cannot be read has a fingerprint naming the error.
func Fingerprint(path string) string {
	fp, _ := fingerprint(path)
	return fp
}

// fingerprint hashes the names and contents of the policy files at path.
func fingerprint(path string) (string, error) {
	files, err := policyFiles(path)
	if err != nil {
		return "error:" + err.Error(), err
	}
	h := sha256.New()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return "error:" + err.Error(), err
		}
		_, _ = io.WriteString(h, f+"\x00")
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "error:" + err.Error(), err
		}
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
