package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"time"
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
	OnLoad   func(*Set)
	OnError  func(error)
}

// Run checks every Interval until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	last, _ := fingerprint(w.Path)
	pending := last
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp, err := fingerprint(w.Path)
		if fp != pending {
			pending = fp // changed since the last look: wait until it holds still
			continue
		}
		if fp == last {
			continue
		}
		last = fp
		if err != nil {
			w.OnError(err)
			continue
		}
		set, err := LoadPath(w.Path)
		if err != nil {
			w.OnError(err)
			continue
		}
		w.OnLoad(set)
	}
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
