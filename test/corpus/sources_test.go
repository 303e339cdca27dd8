package corpus

// The corpus as stored: each project's files gzipped, unpacked once into a
// temporary directory, each checked against the git blob id its SOURCE names.

import (
	"bufio"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// source is a project's SOURCE file.
type source struct {
	repository, revision, commit string
	licences                     []string
	files                        map[string]string // path in the repository: git blob id
}

func readSource(t *testing.T, project string) source {
	t.Helper()
	f, err := os.Open(filepath.Join(project, "SOURCE"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := source{files: map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("%s/SOURCE: %q is not KEY: VALUE", project, sc.Text())
		}
		switch key {
		case "repository":
			s.repository = value
		case "revision":
			s.revision = value
		case "commit":
			s.commit = value
		case "licence":
			s.licences = append(s.licences, value)
		case "file":
			blob, path, ok := strings.Cut(value, " ")
			if !ok {
				t.Fatalf("%s/SOURCE: file %q is not BLOB PATH", project, value)
			}
			s.files[path] = blob
		default:
			t.Fatalf("%s/SOURCE: unknown key %q", project, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if s.repository == "" || s.revision == "" || len(s.commit) != 40 || len(s.files) == 0 {
		t.Fatalf("%s/SOURCE names no repository, revision, commit or file: %+v", project, s)
	}
	return s
}

// gitBlobID is the id git gives a file with this content.
func gitBlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// unpack writes every project's files under corpusDir, once per test binary,
// and fails where a file is not the one its SOURCE names.
func unpack(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(corpusDir, ".unpacked")); err == nil {
		return corpusDir
	}
	sources, err := filepath.Glob("*/SOURCE")
	if err != nil || len(sources) < 6 {
		t.Fatalf("want at least six projects, found %d SOURCE files (%v)", len(sources), err)
	}
	for _, sf := range sources {
		project := filepath.Dir(sf)
		s := readSource(t, project)
		for _, l := range s.licences {
			if _, err := os.Stat(filepath.Join(project, l)); err != nil {
				t.Errorf("%s: licence %v", project, err)
			}
		}
		if !slices.Contains(s.licences, "LICENSE") {
			t.Errorf("%s: SOURCE names no LICENSE", project)
		}
		stored, err := storedFiles(project)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range stored {
			if _, ok := s.files[path]; !ok {
				t.Errorf("%s/%s.gz is not named in %s/SOURCE", project, path, project)
			}
		}
		for path, blob := range s.files {
			data, err := gunzip(filepath.Join(project, path+".gz"))
			if err != nil {
				t.Fatalf("%s: %v", project, err)
			}
			if got := gitBlobID(data); got != blob {
				t.Fatalf("%s/%s: git blob %s, SOURCE says %s (%s at %s)", project, path, got, blob, s.repository, s.revision)
			}
			out := filepath.Join(corpusDir, project, path)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if err := os.WriteFile(filepath.Join(corpusDir, ".unpacked"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return corpusDir
}

// storedFiles are the repository paths of a project's .gz files.
func storedFiles(project string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(project, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".gz") {
			return err
		}
		rel, err := filepath.Rel(project, strings.TrimSuffix(path, ".gz"))
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	return out, err
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, zr.Close()
}

// TestCorpusSources: every stored file is the one its SOURCE names, with
// the project's licence beside it.
func TestCorpusSources(t *testing.T) {
	unpack(t)
	var total int64
	err := filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus: %d bytes unpacked", total)
}
