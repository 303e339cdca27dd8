package imageverify

// The signatures these tests verify were written by cosign itself: with
// TOLLGATE_COSIGN set to a cosign binary and TOLLGATE_COSIGN_RECORD=1
// (make signatures), TestRecordCosign signs images in a registry on
// loopback, runs cosign verify on each image and key, and keeps the
// registry's contents (an OCI layout) and cosign's verdicts in
// imageverifytest/cosign/.
// TestCosignVerdicts then decides the same cases with Verifier, on every
// run, and must agree with cosign on each.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// recordDir is where TestRecordCosign writes, in the source tree.
const recordDir = "imageverifytest/cosign"

// verdict is cosign verify's answer for one image and key.
type cosignVerdict struct {
	Image    string `json:"image"` // repository:tag, without the registry
	Key      string `json:"key"`   // testdata/cosign/<key>.pub
	Bundle   bool   `json:"newBundleFormat"`
	Verified bool   `json:"verified"`
	Output   string `json:"output,omitempty"` // cosign's last line when it refused
}

// signing is how TestRecordCosign signs one image.
type signing struct {
	image  string // repository:tag
	key    string
	bundle bool
}

var signings = []signing{
	{"app:ecdsa-tag", "ecdsa", false},
	{"app:ecdsa-bundle", "ecdsa", true},
	{"app:ed25519-tag", "ed25519", false},
	{"app:rsa-tag", "rsa", false},
	{"app:rsa-bundle", "rsa", true},
	{"other:both", "ecdsa", false},
	{"other:both", "ecdsa", true},
}

// unsigned are images pushed with no signature; moved gets the signature
// tag of app:ecdsa-tag copied onto it (a signature of another digest),
// moved-att its attestation tag; attested-only is attested, not signed.
var unsigned = []string{"app:unsigned", "app:moved", "app:moved-att", "app:attested-only"}

// attesting is how TestRecordCosign attests one image.
type attesting struct {
	image     string
	key       string
	bundle    bool
	predicate string // a file of attestationPredicates, named by cosign's --type
	kind      string // cosign's --type
}

// attestations: SLSA v1 provenance from the CI builder or from another
// builder, and a vulnerability scan, in both forms.
var attestations = []attesting{
	{"app:ecdsa-tag", "ecdsa", false, "ci", "slsaprovenance1"},
	{"app:ecdsa-bundle", "ecdsa", true, "ci", "slsaprovenance1"},
	{"app:rsa-tag", "rsa", false, "scan", "vuln"},
	{"app:rsa-bundle", "rsa", true, "elsewhere", "slsaprovenance1"},
	{"other:both", "ecdsa", false, "elsewhere", "slsaprovenance1"},
	{"other:both", "ecdsa", true, "ci", "slsaprovenance1"},
	{"app:attested-only", "ecdsa", false, "ci", "slsaprovenance1"},
}

// attestationPredicates are the predicates attested, by name.
var attestationPredicates = map[string]string{
	"ci":        `{"buildDefinition":{"buildType":"https://ci.example.com/build/v1","externalParameters":{"repository":"https://git.example.com/app"}},"runDetails":{"builder":{"id":"https://ci.example.com/builder"}}}`,
	"elsewhere": `{"buildDefinition":{"buildType":"https://ci.example.com/build/v1","externalParameters":{"repository":"https://git.example.com/app"}},"runDetails":{"builder":{"id":"https://laptop.example.com/"}}}`,
	"scan":      `{"invocation":{"uri":"https://ci.example.com/scan"},"scanner":{"uri":"https://scanner.example.com","version":"1.0.0","result":{"vulnerabilities":[]}},"metadata":{"scanStartedOn":"2026-12-01T10:00:00Z","scanFinishedOn":"2026-12-01T10:01:00Z"}}`,
}

// builderPolicy is the Rego policy cosign verify-attestation --policy
// is given: the provenance is the CI builder's. attestationCondition is
// the same condition in CEL, for TestCosignAttestationVerdicts.
const (
	builderPolicy = `package signature
default allow = false
allow { input.predicate.runDetails.builder.id == "https://ci.example.com/builder" }
`
	attestationCondition = `predicate.runDetails.builder.id == "https://ci.example.com/builder"`
)

// attestationVerdict is cosign verify-attestation's answer for one image,
// key, predicate type and policy.
type attestationVerdict struct {
	Image    string `json:"image"`
	Key      string `json:"key"`
	Bundle   bool   `json:"newBundleFormat"`
	Type     string `json:"type"`   // cosign's --type
	Policy   bool   `json:"policy"` // with builderPolicy
	Verified bool   `json:"verified"`
	Output   string `json:"output,omitempty"`
}

func TestRecordCosign(t *testing.T) {
	cosign := os.Getenv("TOLLGATE_COSIGN")
	if os.Getenv("TOLLGATE_COSIGN_RECORD") == "" || cosign == "" {
		t.Skip("make signatures records cosign's signatures (TOLLGATE_COSIGN, TOLLGATE_COSIGN_RECORD=1)")
	}
	work := t.TempDir()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.WithReferrersSupport(true)))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	env := append(os.Environ(), "COSIGN_PASSWORD=", "HOME="+work, "TUF_ROOT="+filepath.Join(work, "tuf"))
	run := func(args ...string) (string, error) {
		cmd := exec.Command(cosign, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(args ...string) {
		if out, err := run(args...); err != nil {
			t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Keys: ECDSA P-256 from cosign, ed25519 and RSA imported into it.
	must("generate-key-pair", "--output-key-prefix", "ecdsa")
	for kind, key := range map[string]any{"ed25519": newEd25519(t), "rsa": newRSA(t)} {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		pemFile := filepath.Join(work, kind+".pem")
		if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		must("import-key-pair", "--key", pemFile, "--output-key-prefix", kind)
	}
	// A key that signs nothing, for the wrong-key cases.
	must("generate-key-pair", "--output-key-prefix", "stranger")
	for _, ref := range append(imagesOf(signings), unsigned...) {
		imageverifytest.Push(t, host+"/"+ref)
	}
	registryFlags := []string{"--allow-insecure-registry", "--allow-http-registry"}
	for _, s := range signings {
		d := digestOf(t, host+"/"+s.image)
		args := append([]string{"sign", "--key", s.key + ".key", "--tlog-upload=false", "-y"}, registryFlags...)
		if s.bundle {
			args = append(args, "--new-bundle-format", "--use-signing-config=false")
		}
		must(append(args, d)...)
	}
	for _, a := range attestations {
		pred := filepath.Join(work, a.predicate+".json")
		if err := os.WriteFile(pred, []byte(attestationPredicates[a.predicate]), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"attest", "--key", a.key + ".key", "--type", a.kind, "--predicate", pred, "--tlog-upload=false", "-y"}, registryFlags...)
		if a.bundle {
			args = append(args, "--new-bundle-format")
		}
		must(append(args, digestOf(t, host+"/"+a.image))...)
	}
	moveSignature(t, host, "app:ecdsa-tag", "app:moved", ".sig")
	moveSignature(t, host, "app:ecdsa-tag", "app:moved-att", ".att")
	// cosign verify needs a trusted root even for keys; one with no
	// authority holds nothing a key-signed image could lean on.
	root := filepath.Join(work, "trusted_root.json")
	if err := os.WriteFile(root, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var verdicts []cosignVerdict
	for _, img := range append(imagesOf(signings), unsigned...) {
		for _, key := range []string{"ecdsa", "ed25519", "rsa", "stranger"} {
			for _, bundle := range []bool{false, true} {
				args := append([]string{"verify", "--key", key + ".pub", "--trusted-root", root, "--insecure-ignore-tlog",
					fmt.Sprintf("--new-bundle-format=%t", bundle)}, registryFlags...)
				out, err := run(append(args, digestOf(t, host+"/"+img))...)
				v := cosignVerdict{Image: img, Key: key, Bundle: bundle, Verified: err == nil}
				if err != nil {
					v.Output = lastLine(out)
				}
				verdicts = append(verdicts, v)
			}
		}
	}
	policy := filepath.Join(work, "builder.rego")
	if err := os.WriteFile(policy, []byte(builderPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	var attested []attestationVerdict
	for _, img := range append(imagesOf(signings), unsigned...) {
		for _, key := range []string{"ecdsa", "rsa", "stranger"} {
			for _, kind := range []string{"slsaprovenance1", "vuln"} {
				for _, bundle := range []bool{false, true} {
					for _, withPolicy := range []bool{false, true} {
						if withPolicy && kind != "slsaprovenance1" {
							continue
						}
						args := append([]string{"verify-attestation", "--key", key + ".pub", "--type", kind, "--trusted-root", root,
							"--insecure-ignore-tlog", fmt.Sprintf("--new-bundle-format=%t", bundle)}, registryFlags...)
						if withPolicy {
							args = append(args, "--policy", policy)
						}
						out, err := run(append(args, digestOf(t, host+"/"+img))...)
						v := attestationVerdict{Image: img, Key: key, Bundle: bundle, Type: kind, Policy: withPolicy, Verified: err == nil}
						if err != nil {
							v.Output = lastLine(out)
						}
						attested = append(attested, v)
					}
				}
			}
		}
	}
	dump(t, host, filepath.Join(recordDir, "registry"))
	for _, key := range []string{"ecdsa", "ed25519", "rsa", "stranger"} {
		b, err := os.ReadFile(filepath.Join(work, key+".pub"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(recordDir, key+".pub"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := json.MarshalIndent(verdicts, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	version, _ := run("version", "--json")
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	_ = json.Unmarshal([]byte(version), &info)
	if err := os.WriteFile(filepath.Join(recordDir, "verdicts.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = json.MarshalIndent(attested, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(recordDir, "attestations.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(recordDir, "COSIGN_VERSION"), []byte(info.GitVersion+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func imagesOf(ss []signing) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s.image] {
			seen[s.image] = true
			out = append(out, s.image)
		}
	}
	return out
}

func newEd25519(t *testing.T) any {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newRSA(t *testing.T) any {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func digestOf(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	return r.Context().Digest(desc.Digest.String()).String()
}

// moveSignature copies from's signature (suffix .sig) or attestation
// (.att) tag to to's: valid for another digest, as an attacker who can
// push tags could place it.
func moveSignature(t *testing.T, host, from, to, suffix string) {
	t.Helper()
	src, err := name.ParseReference(digestOf(t, host+"/"+from), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := name.ParseReference(digestOf(t, host+"/"+to), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := v1.NewHash(src.Identifier())
	dh, _ := v1.NewHash(dst.Identifier())
	sig, err := remote.Image(src.Context().Tag(tagOf(sh, suffix)))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(dst.Context().Tag(tagOf(dh, suffix)), sig); err != nil {
		t.Fatal(err)
	}
}

// dump keeps every tag of every repository, and every referrer of the
// tagged images, in an OCI layout; a manifest's ref.name annotation is
// repository:tag, or repository@digest for a referrer.
func dump(t *testing.T, host, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := name.NewRegistry(host, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(repos)
	for _, repo := range repos {
		r := reg.Repo(repo)
		tags, err := remote.List(r)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(tags)
		for _, tag := range tags {
			img, err := remote.Image(r.Tag(tag))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{imageverifytest.RefAnnotation: repo + ":" + tag})); err != nil {
				t.Fatal(err)
			}
			d, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			idx, err := remote.Referrers(r.Digest(d.String()))
			if err != nil {
				t.Fatal(err)
			}
			m, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			for _, desc := range m.Manifests {
				ref, err := remote.Image(r.Digest(desc.Digest.String()))
				if err != nil {
					t.Fatal(err)
				}
				if err := p.AppendImage(ref, layout.WithAnnotations(map[string]string{imageverifytest.RefAnnotation: repo + "@" + desc.Digest.String()})); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
