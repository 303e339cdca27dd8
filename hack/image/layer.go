package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"time"
)

// The image's user: non-root, the uid and gid distroless's nonroot image
// and deploy/ (runAsUser, runAsGroup) use.
const (
	uid = 65532
	gid = 65532
)

// rootFile is one entry of the image's only layer.
type rootFile struct {
	name string
	mode int64
	dir  bool
	data []byte
}

// files lists everything the image holds, in the order the layer has it.
// No CA certificates: tollgate talks only to the apiserver, and with the
// CA of the in-cluster config or the kubeconfig it is given.
func files(binary []byte) []rootFile {
	return []rootFile{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "tollgate", mode: 0o755, data: binary},
	}
}

// layerTar writes the files as an uncompressed tar, owned by root, each
// with the same modification time, no access or change time, no user or
// group names: nothing in it depends on the machine or the moment of the
// build.
func layerTar(binaryPath string, mtime time.Time) ([]byte, error) {
	bin, err := os.ReadFile(binaryPath)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files(bin) {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: mtime, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
