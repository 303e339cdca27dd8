// Package imageverifytest serves, on loopback, the images and signatures
// cosign wrote for imageverify's tests (imageverify/testdata/cosign), for
// the tests of every package that verifies images.
package imageverifytest

import (
	"embed"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// RefAnnotation names a manifest of the recording: repository:tag, or
// repository@digest for a referrer.
const RefAnnotation = "org.opencontainers.image.ref.name"

// Recording is what cosign wrote: registry/ (an OCI layout), the public
// keys (<name>.pub), cosign's verdicts (verdicts.json) and its version.
//
//go:embed cosign
var Recording embed.FS

// layoutDir copies the recording's registry to a directory, where
// go-containerregistry's layout package reads it.
func layoutDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	sub, err := fs.Sub(Recording, "cosign/registry")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Key is the PEM public key of one of the recording's keys: ecdsa,
// ed25519, rsa, stranger (which signed nothing).
func Key(t testing.TB, name string) string {
	t.Helper()
	b, err := Recording.ReadFile("cosign/" + name + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Serve starts a registry on loopback (plain HTTP, with the referrers
// API) holding the recording, stopped when the test ends; it returns the
// registry's host:port. Its images: app:ecdsa-tag, app:ecdsa-bundle,
// app:rsa-tag, app:rsa-bundle, app:ed25519-tag, other:both (signed with
// both forms by ecdsa), app:unsigned, and app:moved (which carries
// app:ecdsa-tag's signature), and those attestations.json names.
func Serve(t testing.TB) string {
	t.Helper()
	host := Empty(t)
	fill(t, host)
	return host
}

// ServeTLS is Serve over HTTPS, with a certificate for 127.0.0.1 from a
// CA of its own; it returns the host:port and that CA as PEM.
func ServeTLS(t testing.TB) (string, []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	fill(t, host, remote.WithTransport(srv.Client().Transport))
	return host, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// ServeAuth is Serve behind basic authentication: every request needs
// user and password.
func ServeAuth(t testing.TB, user, password string) string {
	t.Helper()
	reg := registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="tollgate-test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	fill(t, host, remote.WithAuth(&authn.Basic{Username: user, Password: password}))
	return host
}

// fill pushes the recording to the registry at host.
func fill(t testing.TB, host string, opts ...remote.Option) {
	t.Helper()
	p, err := layout.FromPath(layoutDir(t))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(host+"/"+desc.Annotations[RefAnnotation], name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
	}
}

// Empty starts an empty registry on loopback (plain HTTP, with the
// referrers API), stopped when the test ends, and returns its host:port.
func Empty(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Policy is a tollgate verifyImages policy named signed-images on Pods and
// Pod templates, for images matching globs, whose one attestor (ci) is the
// recording's ecdsa key. match and spec are more lines of YAML for
// spec.match (indented by four) and spec (by two), or empty.
func Policy(t testing.TB, match, spec string, globs ...string) string {
	t.Helper()
	key := strings.ReplaceAll(strings.TrimSpace(Key(t, "ecdsa")), "\n", "\n          ")
	quoted := make([]string, len(globs))
	for i, g := range globs {
		quoted[i] = strconv.Quote(g)
	}
	return fmt.Sprintf(`apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata:
  name: signed-images
spec:
  match:
    resources: [pods]
    podControllers: true
%s%s  verifyImages:
    images: [%s]
    attestors:
    - name: ci
      transparencyLog: Ignore
      publicKey: |
          %s
`, match, spec, strings.Join(quoted, ", "), key)
}

// WithProvenance makes a Policy need, instead of a signature, a SLSA v1
// provenance attestation from the recording's CI builder
// (https://ci.example.com/builder), which the recording gives
// app:ecdsa-tag, app:ecdsa-bundle, other:both and app:attested-only.
func WithProvenance(policy string) string {
	return strings.Replace(policy, "  verifyImages:\n", `  verifyImages:
    signature: Ignore
    attestations:
    - name: provenance
      predicateType: https://slsa.dev/provenance/v1
      conditions:
      - expression: predicate.runDetails.builder.id == "https://ci.example.com/builder"
        message: the image was not built by the CI builder
`, 1)
}
