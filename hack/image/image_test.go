package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

var all = []platform{{"linux", "amd64"}, {"linux", "arm64"}}

// built is the image make image writes, built once for every test.
var built struct {
	once sync.Once
	dir  string
	res  *result
	src  source
	err  error
}

func image(t *testing.T) (string, *result, source) {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "tollgate-image-")
		if built.err != nil {
			return
		}
		if built.src, built.err = readSource("../..", ""); built.err != nil {
			return
		}
		built.res, built.err = build(options{root: "../..", out: built.dir, repository: "ghcr.io/tollgate-dev/tollgate", source: "https://github.com/tollgate-dev/tollgate", platforms: all})
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir, built.res, built.src
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// TestReproducible builds the image a second time, into another directory,
// and compares every file written: the layout's blobs and index, the
// tarballs, the SBOMs and the binaries. The second build links again (go
// build -o is not cached) and packs everything again.
func TestReproducible(t *testing.T) {
	first, res, _ := image(t)
	second := t.TempDir()
	res2, err := build(options{root: "../..", out: second, repository: "ghcr.io/tollgate-dev/tollgate", source: "https://github.com/tollgate-dev/tollgate", platforms: all})
	if err != nil {
		t.Fatal(err)
	}
	if res.digest != res2.digest {
		t.Errorf("index digest %s, then %s", res.digest, res2.digest)
	}
	a, b := tree(t, first), tree(t, second)
	for f, h := range a {
		if b[f] != h {
			t.Errorf("%s differs between two builds", f)
		}
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			t.Errorf("%s only in the second build", f)
		}
	}
	if len(a) < 10 {
		t.Errorf("only %d files written: %v", len(a), a)
	}
}

// tree is every regular file under dir with its SHA-256.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIndex(t *testing.T) {
	dir, res, _ := image(t)
	b, err := os.ReadFile(filepath.Join(dir, "digest"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(b)) != res.digest.String() {
		t.Errorf("digest file %q, build said %s", b, res.digest)
	}
	for _, p := range all {
		if _, err := platformImageFromLayout(filepath.Join(dir, "oci"), p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := platformImageFromLayout(filepath.Join(dir, "oci"), platform{"linux", "s390x"}); err == nil || !strings.Contains(err.Error(), "linux/amd64") {
		t.Errorf("a platform the image lacks: %v, want an error listing the ones it has", err)
	}
}

func TestConfig(t *testing.T) {
	dir, _, src := image(t)
	for _, p := range all {
		t.Run(p.arch, func(t *testing.T) {
			img, err := platformImageFromLayout(filepath.Join(dir, "oci"), p)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != p.os || cf.Architecture != p.arch {
				t.Errorf("config platform %s/%s", cf.OS, cf.Architecture)
			}
			c := cf.Config
			if c.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532", c.User)
			}
			if strings.Join(c.Entrypoint, " ") != "/tollgate" || strings.Join(c.Cmd, " ") != "serve" {
				t.Errorf("entrypoint %q, cmd %q", c.Entrypoint, c.Cmd)
			}
			_, webhook := c.ExposedPorts["8443/tcp"]
			_, metrics := c.ExposedPorts["9090/tcp"]
			if !webhook || !metrics || len(c.ExposedPorts) != 2 {
				t.Errorf("exposed ports %v, want 8443/tcp and 9090/tcp", c.ExposedPorts)
			}
			if len(c.Env) != 0 {
				t.Errorf("environment %v, want none", c.Env)
			}
			want := map[string]string{
				"org.opencontainers.image.source":   "https://github.com/tollgate-dev/tollgate",
				"org.opencontainers.image.revision": src.revision,
				"org.opencontainers.image.version":  src.version,
				"org.opencontainers.image.licenses": "NOASSERTION",
				"org.opencontainers.image.created":  src.created.Format("2006-01-02T15:04:05Z"),
			}
			for k, v := range want {
				if c.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
				}
			}
			if !cf.Created.Time.Equal(src.created) {
				t.Errorf("created %v, want the commit's time %v", cf.Created.Time, src.created)
			}
			if len(cf.RootFS.DiffIDs) != 1 || len(cf.History) != 1 {
				t.Errorf("%d layers, %d history entries; want one of each", len(cf.RootFS.DiffIDs), len(cf.History))
			}
		})
	}
}

// TestFiles reads each image's filesystem: exactly the files layer.go
// lists, owned by root, with the commit's time; the binary static, for the
// image's architecture, built with CGO off and -trimpath.
func TestFiles(t *testing.T) {
	dir, _, src := image(t)
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for _, p := range all {
		t.Run(p.arch, func(t *testing.T) {
			img, err := platformImageFromLayout(filepath.Join(dir, "oci"), p)
			if err != nil {
				t.Fatal(err)
			}
			got := readFS(t, img)
			var names []string
			for _, h := range got {
				names = append(names, h.hdr.Name)
				if h.hdr.Uid != 0 || h.hdr.Gid != 0 || !h.hdr.ModTime.Equal(src.created) {
					t.Errorf("%s: uid %d gid %d mtime %v", h.hdr.Name, h.hdr.Uid, h.hdr.Gid, h.hdr.ModTime)
				}
			}
			if strings.Join(names, " ") != "etc etc/group etc/passwd tollgate" {
				t.Fatalf("files %q, want exactly etc etc/group etc/passwd tollgate", names)
			}
			if !strings.Contains(string(got[2].data), "nonroot:x:65532:65532:") || !strings.Contains(string(got[1].data), "nonroot:x:65532:") {
				t.Errorf("no user or group 65532:\n%s\n%s", got[2].data, got[1].data)
			}
			bin := got[3]
			if bin.hdr.Mode != 0o755 {
				t.Errorf("tollgate mode %o", bin.hdr.Mode)
			}
			ef, err := elf.NewFile(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatal(err)
			}
			if ef.Machine != machines[p.arch] {
				t.Errorf("binary for %v, want %v", ef.Machine, machines[p.arch])
			}
			for _, prog := range ef.Progs {
				if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
					t.Errorf("binary is dynamically linked (%v)", prog.Type)
				}
			}
			bi, err := buildinfo.Read(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			for k, v := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": p.os, "GOARCH": p.arch} {
				if settings[k] != v {
					t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
				}
			}
			// -trimpath keeps -ldflags out of the build information; the
			// commit's hash is in the binary only if -X set it.
			if !bytes.Contains(bin.data, []byte(src.commit)) {
				t.Errorf("the binary does not hold the commit %s (internal/version.revision)", src.commit)
			}
		})
	}
}

type entry struct {
	hdr  *tar.Header
	data []byte
}

func readFS(t *testing.T, img v1.Image) []entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h, b})
	}
}

func TestParsePlatforms(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "linux/amd64,linux/arm64", want: "[linux/amd64 linux/arm64]"},
		{in: " linux/arm64 ", want: "[linux/arm64]"},
		{in: "linux", wantErr: "want OS/ARCH"},
		{in: "linux/arm/v7", wantErr: "want OS/ARCH"},
		{in: "linux/amd64,linux/amd64", wantErr: "given twice"},
		{in: "", wantErr: "want OS/ARCH"},
	}
	for _, tt := range tests {
		got, err := parsePlatforms(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parsePlatforms(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePlatforms(%q): %v", tt.in, err)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if "["+strings.Join(s, " ")+"]" != tt.want {
			t.Errorf("parsePlatforms(%q) = %v, want %s", tt.in, s, tt.want)
		}
	}
}

func TestValidTag(t *testing.T) {
	for tag, want := range map[string]bool{
		"v0.1.0": true, "latest": true, "0.1.0-rc.1": true, "_x": true,
		"": false, "-v1": false, ".v1": false, "v1+build": false, "v1/x": false, strings.Repeat("a", 129): false,
	} {
		if got := validTag(tag); got != want {
			t.Errorf("validTag(%q) = %v, want %v", tag, got, want)
		}
	}
}
