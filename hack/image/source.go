package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// source is what the image says about the tree it was built from.
type source struct {
	version  string
	revision string // the commit, with "-dirty" when the tree had changes
	commit   string // the commit alone
	dirty    bool
	created  time.Time
}

// readSource reads the release from VERSION (unless given), and the commit
// and its time from git. SOURCE_DATE_EPOCH, when set, replaces the commit's
// time, as reproducible-builds.org specifies; outside a git checkout it is
// required, and the revision is "unknown".
func readSource(root, version string) (source, error) {
	s := source{version: version}
	if s.version == "" {
		b, err := os.ReadFile(filepath.Join(root, "VERSION"))
		if err != nil {
			return s, fmt.Errorf("no -version and no VERSION file: %w", err)
		}
		s.version = strings.TrimSpace(string(b))
	}
	if !validTag(s.version) {
		return s, fmt.Errorf("version %q is not a valid image tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})", s.version)
	}
	rev, revErr := git(root, "rev-parse", "HEAD")
	if revErr == nil {
		s.revision, s.commit = rev, rev
		if st, err := git(root, "status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
			s.revision += "-dirty"
			s.dirty = true
		}
	} else {
		s.revision, s.commit = "unknown", "unknown"
	}
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return s, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", e, err)
		}
		s.created = time.Unix(n, 0).UTC()
		return s, nil
	}
	if revErr != nil {
		return s, fmt.Errorf("%s is not a git checkout (%w): set SOURCE_DATE_EPOCH for the image's timestamps", root, revErr)
	}
	ct, err := git(root, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, err
	}
	n, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return s, fmt.Errorf("commit time %q: %w", ct, err)
	}
	s.created = time.Unix(n, 0).UTC()
	return s, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// validTag is the distribution spec's tag grammar.
func validTag(t string) bool {
	if t == "" || len(t) > 128 {
		return false
	}
	for i, c := range t {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || i > 0 && (c == '.' || c == '-')
		if !ok {
			return false
		}
	}
	return true
}

// goBuild builds tollgate for p into dir/tollgate: static (CGO off), paths
// trimmed, symbol tables stripped, the release and the commit set in
// internal/version (-buildvcs=false: what the go command would record
// depends on GOFLAGS and on how the tree was checked out).
func goBuild(root, dir string, p platform, src source) (string, error) {
	bin := filepath.Join(dir, "tollgate")
	const v = "github.com/tollgate-dev/tollgate/internal/version."
	ldflags := fmt.Sprintf("-s -w -X %srelease=%s -X %srevision=%s -X %smodified=%t", v, src.version, v, src.commit, v, src.dirty)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/tollgate")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build for %s: %w\n%s", p, err, out)
	}
	return bin, nil
}
