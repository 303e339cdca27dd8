package main

import (
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// writeSBOM writes a CycloneDX SBOM of one platform's image: the image,
// the tollgate binary in it, the Go standard library and every module the
// binary was linked from, read from the build information the go command
// embedded in it (debug/buildinfo, what `go version -m` prints), so it
// lists exactly what is in the binary, not what go.mod could reach. The
// binary records no edges between modules, so each hangs off tollgate.
func writeSBOM(path, bin string, p platform, src source, tag name.Tag, manifest v1.Hash) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	imageRef := "image"
	appRef := "pkg:golang/" + bi.Main.Path + "@" + src.version + "?type=module&goos=" + p.os + "&goarch=" + p.arch
	stdRef := "pkg:golang/std@" + bi.GoVersion + "?type=module"

	var props []cdx.Property
	for _, s := range bi.Settings {
		props = append(props, cdx.Property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	components := []cdx.Component{
		{
			BOMRef: appRef, Type: cdx.ComponentTypeApplication, Name: bi.Main.Path, Version: src.version,
			PackageURL: appRef, Licenses: &cdx.Licenses{{Expression: licence}}, Properties: &props,
		},
		{BOMRef: stdRef, Type: cdx.ComponentTypeLibrary, Name: "std", Version: bi.GoVersion, PackageURL: stdRef},
	}
	deps := []string{stdRef}
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		ref := "pkg:golang/" + m.Path + "@" + m.Version + "?type=module"
		c := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: m.Path, Version: m.Version, PackageURL: ref}
		if m.Sum != "" {
			c.Properties = &[]cdx.Property{{Name: "go:sum", Value: m.Sum}}
		}
		components = append(components, c)
		deps = append(deps, ref)
	}

	bom := cdx.NewBOM()
	bom.SerialNumber = serial(manifest)
	bom.Metadata = &cdx.Metadata{
		Timestamp: src.created.Format("2006-01-02T15:04:05Z"),
		Component: &cdx.Component{
			BOMRef: imageRef, Type: cdx.ComponentTypeContainer, Name: tag.Context().Name(), Version: tag.TagStr(),
			PackageURL: ociPURL(tag, manifest, p),
			Properties: &[]cdx.Property{{Name: "oci:manifest:digest", Value: manifest.String()}, {Name: "oci:platform", Value: p.String()}, {Name: "vcs:revision", Value: src.revision}},
		},
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "tollgate hack/image (make image)"}}},
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{
		{Ref: imageRef, Dependencies: &[]string{appRef}},
		{Ref: appRef, Dependencies: &deps},
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON).SetPretty(true).Encode(bom); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ociPURL is the package URL of an OCI image, as the purl spec gives it:
// the last path segment of the name, the digest as version, the rest as
// qualifiers.
func ociPURL(tag name.Tag, manifest v1.Hash, p platform) string {
	repo := tag.Context().Name()
	last := repo[strings.LastIndex(repo, "/")+1:]
	q := url.Values{}
	q.Set("repository_url", repo)
	q.Set("tag", tag.TagStr())
	q.Set("arch", p.arch)
	q.Set("os", p.os)
	return fmt.Sprintf("pkg:oci/%s@%s?%s", last, url.PathEscape(manifest.String()), q.Encode())
}

// serial is a version-4-shaped UUID URN made from the manifest digest, so
// the same image always has the same SBOM serial number.
func serial(manifest v1.Hash) string {
	b, _ := hex.DecodeString(manifest.Hex)
	if len(b) < 16 {
		b = append(b, make([]byte, 16)...)
	}
	u := b[:16]
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return "urn:uuid:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
