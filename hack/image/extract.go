package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// platformImageFromLayout reads the image of p from an OCI layout written
// by build: index.json names one image index, which holds one image per
// platform.
func platformImageFromLayout(dir string, p platform) (v1.Image, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	tm, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(tm.Manifests) != 1 {
		return nil, fmt.Errorf("OCI layout %s: index.json names %d manifests, want the one image index make image writes", dir, len(tm.Manifests))
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == p.os && d.Platform.Architecture == p.arch {
			return idx.Image(d.Digest)
		}
		if d.Platform != nil {
			have = append(have, d.Platform.OS+"/"+d.Platform.Architecture)
		}
	}
	return nil, fmt.Errorf("OCI layout %s has no image for %s (it has %v)", dir, p, have)
}

// extract writes one regular file of the image's filesystem to out,
// executable.
func extract(dir string, p platform, file, out string) error {
	img, err := platformImageFromLayout(dir, p)
	if err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	want := path.Clean(file)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the %s image has no file %s", p, file)
		}
		if err != nil {
			return err
		}
		if path.Clean(h.Name) != want || h.Typeflag != tar.TypeReg {
			continue
		}
		f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}
