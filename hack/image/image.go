package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type options struct {
	root, out, version, repository, source string
	platforms                              []platform
}

// result is what a build wrote.
type result struct {
	version   string
	digest    v1.Hash // of the image index
	platforms []platformResult
}

type platformResult struct {
	platform
	manifestDigest v1.Hash
	compressedSize int64
	tarball        string
	sbom           string
}

// ports tollgate serves on in deploy/: the webhooks and /metrics.
var ports = []int{8443, 9090}

// build makes the image of every platform and writes the layout, the
// tarballs and the SBOMs. It replaces o.out.
func build(o options) (*result, error) {
	src, err := readSource(o.root, o.version)
	if err != nil {
		return nil, err
	}
	tag, err := name.NewTag(o.repository+":"+src.version, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("image name: %w", err)
	}
	if err := os.RemoveAll(o.out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	res := &result{version: src.version}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.platforms {
		dir := filepath.Join(o.out, "bin", p.os+"-"+p.arch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		bin, err := goBuild(o.root, dir, p, src)
		if err != nil {
			return nil, err
		}
		img, err := platformImage(bin, p, src, o.source)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		pr := platformResult{platform: p}
		if pr.manifestDigest, err = img.Digest(); err != nil {
			return nil, err
		}
		if m, err := img.Manifest(); err == nil {
			for _, l := range m.Layers {
				pr.compressedSize += l.Size
			}
		}
		pr.tarball = filepath.Join(o.out, fmt.Sprintf("tollgate-%s-%s-%s.tar", src.version, p.os, p.arch))
		if err := tarball.WriteToFile(pr.tarball, tag, img); err != nil {
			return nil, fmt.Errorf("%s: tarball: %w", p, err)
		}
		pr.sbom = filepath.Join(o.out, fmt.Sprintf("sbom-%s-%s.cdx.json", p.os, p.arch))
		if err := writeSBOM(pr.sbom, bin, p, src, tag, pr.manifestDigest); err != nil {
			return nil, fmt.Errorf("%s: SBOM: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.os, Architecture: p.arch}},
		})
		res.platforms = append(res.platforms, pr)
	}
	if res.digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	lp, err := layout.Write(filepath.Join(o.out, "oci"), empty.Index)
	if err != nil {
		return nil, err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.String(),
	})); err != nil {
		return nil, fmt.Errorf("OCI layout: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.out, "digest"), []byte(res.digest.String()+"\n"), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// platformImage is the image of one platform: one layer (layer.go) and a
// config that runs /tollgate as the non-root user.
func platformImage(bin string, p platform, src source, sourceURL string) (v1.Image, error) {
	raw, err := layerTar(bin, src.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression))
	if err != nil {
		return nil, err
	}
	exposed := map[string]struct{}{}
	for _, port := range ports {
		exposed[strconv.Itoa(port)+"/tcp"] = struct{}{}
	}
	cfg := &v1.ConfigFile{
		Architecture: p.arch,
		OS:           p.os,
		Created:      v1.Time{Time: src.created},
		Config: v1.Config{
			User:         fmt.Sprintf("%d:%d", uid, gid),
			Entrypoint:   []string{"/tollgate"},
			Cmd:          []string{"serve"},
			WorkingDir:   "/",
			ExposedPorts: exposed,
			Labels:       labels(src, sourceURL),
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: src.created},
			CreatedBy: fmt.Sprintf("make image: tollgate %s for %s, CGO_ENABLED=0 go build -trimpath", src.version, p),
			Comment:   "static binary, /etc/passwd and /etc/group",
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: src.created})
}

// labels are the OCI annotations' pre-defined keys, as image labels.
func labels(src source, sourceURL string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "tollgate",
		"org.opencontainers.image.description": "A Kubernetes admission webhook: sidecar injection and policies",
		"org.opencontainers.image.source":      sourceURL,
		"org.opencontainers.image.url":         sourceURL,
		"org.opencontainers.image.revision":    src.revision,
		"org.opencontainers.image.version":     src.version,
		"org.opencontainers.image.created":     src.created.Format("2006-01-02T15:04:05Z"),
		// The repository has no licence file yet: SPDX's word for "not stated".
		"org.opencontainers.image.licenses": licence,
	}
}

// licence is the SPDX expression of tollgate's licence, in the labels and
// the SBOM.
const licence = "NOASSERTION"
