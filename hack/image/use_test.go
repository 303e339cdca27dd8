package main

// The image as its users take it: run as its user, loaded from its
// tarball, described by its SBOM.

import (
	"archive/tar"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestRunsAsNonRoot unpacks this machine's image into an empty directory
// and runs the binary there as it runs in a Pod: chrooted, so no file but
// the image's is present, as user and group 65532.
func TestRunsAsNonRoot(t *testing.T) {
	dir, _, src := image(t)
	if os.Geteuid() != 0 {
		t.Skip("chroot and setuid need root (CI runs as root)")
	}
	p := platform{runtime.GOOS, runtime.GOARCH}
	img, err := platformImageFromLayout(filepath.Join(dir, "oci"), p)
	if err != nil {
		t.Fatal(err)
	}
	rootfs := t.TempDir()
	if err := os.Chmod(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range readFS(t, img) {
		target := filepath.Join(rootfs, e.hdr.Name)
		if e.hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, os.FileMode(e.hdr.Mode)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(target, e.data, os.FileMode(e.hdr.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"version"}, []string{"tollgate " + src.version + ", commit " + src.commit, p.String()}},
		{[]string{"--help"}, []string{"serve", "check", "version"}},
	} {
		cmd := exec.Command("/tollgate", tt.args...)
		cmd.Dir = "/"
		cmd.Env = []string{}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tollgate %v as 65532 in the image's filesystem: %v\n%s", tt.args, err, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("tollgate %v printed %q, want it to say %q", tt.args, out, w)
			}
		}
	}
}

// TestTarball loads each docker tarball back: tagged with the image's name,
// the same config and layer as in the layout.
func TestTarball(t *testing.T) {
	dir, res, src := image(t)
	tag, err := name.NewTag("ghcr.io/tollgate-dev/tollgate:" + src.version)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range res.platforms {
		want, err := platformImageFromLayout(filepath.Join(dir, "oci"), pr.platform)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tarball.ImageFromPath(pr.tarball, &tag)
		if err != nil {
			t.Fatalf("%s: %s does not hold %s: %v", pr.platform, pr.tarball, tag, err)
		}
		gc, _ := got.ConfigName()
		wc, _ := want.ConfigName()
		gl, _ := got.Layers()
		wl, _ := want.Layers()
		if gc != wc || len(gl) != 1 || len(wl) != 1 {
			t.Fatalf("%s: config %s (want %s), %d layers", pr.platform, gc, wc, len(gl))
		}
		gd, _ := gl[0].DiffID()
		wd, _ := wl[0].DiffID()
		if gd != wd {
			t.Errorf("%s: layer %s, want %s", pr.platform, gd, wd)
		}
	}
}

// TestSBOM compares each SBOM with the build information of the binary it
// describes: every module linked in, at its version.
func TestSBOM(t *testing.T) {
	dir, res, src := image(t)
	for _, pr := range res.platforms {
		f, err := os.Open(pr.sbom)
		if err != nil {
			t.Fatal(err)
		}
		var bom cdx.BOM
		err = cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		bi, err := buildinfo.ReadFile(filepath.Join(dir, "bin", pr.os+"-"+pr.arch, "tollgate"))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]string{}
		for _, c := range *bom.Components {
			have[c.Name] = c.Version
		}
		if have["github.com/tollgate-dev/tollgate"] != src.version || have["std"] != bi.GoVersion {
			t.Errorf("%s: tollgate %q, std %q", pr.platform, have["github.com/tollgate-dev/tollgate"], have["std"])
		}
		for _, m := range bi.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			if have[m.Path] != m.Version {
				t.Errorf("%s: module %s is %q in the SBOM, %q in the binary", pr.platform, m.Path, have[m.Path], m.Version)
			}
		}
		if len(*bom.Components) != len(bi.Deps)+2 {
			t.Errorf("%s: %d components for %d modules", pr.platform, len(*bom.Components), len(bi.Deps))
		}
		if len(bi.Deps) < 50 {
			t.Errorf("%s: only %d modules in the binary", pr.platform, len(bi.Deps))
		}
		mc := bom.Metadata.Component
		if mc.Type != cdx.ComponentTypeContainer || !strings.Contains(mc.PackageURL, pr.manifestDigest.Hex) {
			t.Errorf("%s: SBOM describes %s %s, want the image %s", pr.platform, mc.Type, mc.PackageURL, pr.manifestDigest)
		}
	}
}
