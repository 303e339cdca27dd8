// Command image builds tollgate's container image with no Docker daemon and
// no base image: for each platform, the static binary (CGO off, -trimpath),
// /etc/passwd and /etc/group with its non-root user, and an OCI config,
// assembled with go-containerregistry. It writes, under -out:
//
//	oci/                           an OCI image layout: index.json names the image index
//	                               (one manifest per platform), tagged REPOSITORY:VERSION
//	tollgate-VERSION-OS-ARCH.tar   per platform, a tarball for docker load or kind load image-archive
//	sbom-OS-ARCH.cdx.json          per platform, a CycloneDX SBOM of the binary's module graph
//	digest                         the image index's digest
//
// Two builds of one commit give the same bytes: every timestamp is the
// commit's (or SOURCE_DATE_EPOCH), files are written in one order, and the
// Go build is reproducible under -trimpath.
//
//	go -C hack/image run . -root ../.. -out ../../bin/image            (make image)
//	go -C hack/image run . extract -layout ../../bin/image/oci -o FILE (the binary of this platform)
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "extract" {
		return runExtract(args[1:])
	}
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.root, "root", "../..", "the tollgate repository")
	fs.StringVar(&o.out, "out", "../../bin/image", "directory to write the image into (replaced)")
	fs.StringVar(&o.version, "version", "", "release of the image and its tag (default: the repository's VERSION file)")
	fs.StringVar(&o.repository, "repository", "ghcr.io/tollgate-dev/tollgate", "image name, without the tag")
	fs.StringVar(&o.source, "source", "https://github.com/tollgate-dev/tollgate", "the org.opencontainers.image.source label")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/ARCH list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.platforms, err = parsePlatforms(*platforms); err != nil {
		return err
	}
	res, err := build(o)
	if err != nil {
		return err
	}
	fmt.Printf("%s:%s %s\n", o.repository, res.version, res.digest)
	for _, p := range res.platforms {
		fmt.Printf("  %s/%s %s, %d bytes compressed, %s\n", p.os, p.arch, p.manifestDigest, p.compressedSize, p.tarball)
	}
	return nil
}

func runExtract(args []string) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	layoutDir := fs.String("layout", "../../bin/image/oci", "OCI image layout written by this command")
	platform := fs.String("platform", runtime.GOOS+"/"+runtime.GOARCH, "OS/ARCH of the image to read")
	file := fs.String("file", "tollgate", "path of the file in the image")
	out := fs.String("o", "", "where to write it (executable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("extract: -o is required")
	}
	ps, err := parsePlatforms(*platform)
	if err != nil {
		return err
	}
	if len(ps) != 1 {
		return fmt.Errorf("extract: one -platform, not %q", *platform)
	}
	return extract(*layoutDir, ps[0], *file, *out)
}

// platform is one OS/ARCH pair.
type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "/" + p.arch }

func parsePlatforms(s string) ([]platform, error) {
	var ps []platform
	seen := map[platform]bool{}
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		if !ok || os == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("platform %q: want OS/ARCH, for example linux/arm64", f)
		}
		p := platform{os, arch}
		if seen[p] {
			return nil, fmt.Errorf("platform %s given twice", p)
		}
		seen[p] = true
		ps = append(ps, p)
	}
	return ps, nil
}
