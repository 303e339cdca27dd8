//go:build e2e

package kyvernodiff

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// Kyverno's answers are recorded in recordFile, so that make test needs no
// Kyverno binary (compiling it took a new machine about 12 minutes).
// make peers runs the pinned Kyverno live and writes the file; make e2e
// checks tollgate against it. The file is keyed by what decides Kyverno's
// answers: the pinned Kyverno (hack/kyverno's go.mod and go.sum), the
// pinned kube-apiserver (its own refusals are among the answers), and
// every request the differential makes. A change of any of them without a
// new recording fails the test, naming make peers.
const recordFile = "testdata/kyverno-answers.json"

// recording is recordFile's content. encoding/json writes map keys sorted,
// so one set of answers always gives the same bytes.
type recording struct {
	Kyverno       string            `json:"kyverno"`       // the pinned version, for readers
	Pin           string            `json:"pin"`           // sha256 of hack/kyverno/go.mod and go.sum
	KubeAPIServer string            `json:"kubeApiserver"` // the k8s.io/kubernetes version hack/tools pins
	Corpus        string            `json:"corpus"`        // sha256 of the requests (corpusKey)
	Answers       map[string]answer `json:"answers"`       // every request, keyed namespace/kind/name
	Changed       map[string]answer `json:"changed"`       // the resource suites' requests after the change
}

// recordKey is the recording's header for these cases: what the recording
// must have been made with.
func recordKey(cases []policyCase, stored []*unstructured.Unstructured) (recording, error) {
	root := framework.RepoRoot()
	var pin bytes.Buffer
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, "hack", "kyverno", f))
		if err != nil {
			return recording{}, fmt.Errorf("the Kyverno pin: %w", err)
		}
		pin.Write(data)
	}
	kyverno, err := required(filepath.Join(root, "hack", "kyverno", "go.mod"), "github.com/kyverno/kyverno")
	if err != nil {
		return recording{}, err
	}
	kube, err := required(filepath.Join(root, "hack", "tools", "go.mod"), "k8s.io/kubernetes")
	if err != nil {
		return recording{}, err
	}
	corpus, err := corpusKey(cases, stored)
	if err != nil {
		return recording{}, err
	}
	sum := sha256.Sum256(pin.Bytes())
	return recording{Kyverno: kyverno, Pin: hex.EncodeToString(sum[:]), KubeAPIServer: kube, Corpus: corpus}, nil
}

// required is the version go.mod requires of module.
func required(gomod, module string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Text()), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s requires no %s", gomod, module)
}

// corpusKey is the sha256 of every request the differential makes and
// every object it stores first: each case's namespace (labels,
// annotations), the policy documents as applied, the objects created (and
// Deployments sent as UPDATEs of baseDeployment), the Pods exec'ed into,
// and each resource suite's change.
func corpusKey(cases []policyCase, stored []*unstructured.Unstructured) (string, error) {
	type caseKey struct {
		Name, Namespace         string
		Namespaced              bool
		Docs                    []string
		Objects                 []map[string]any
		Execs                   []string
		NSLabels, NSAnnotations map[string]string
	}
	var key struct {
		Base    any
		Cases   []caseKey
		Stored  []map[string]any
		Changes []string
	}
	key.Base = baseDeployment()
	for _, c := range cases {
		k := caseKey{Name: c.name, Namespace: c.namespace, Namespaced: c.namespaced, Execs: c.execs, NSLabels: c.nsLabels, NSAnnotations: c.nsAnnotations}
		for _, d := range c.docs {
			k.Docs = append(k.Docs, string(d))
		}
		for _, o := range c.objects {
			k.Objects = append(k.Objects, o.Object)
		}
		key.Cases = append(key.Cases, k)
	}
	for _, o := range stored {
		key.Stored = append(key.Stored, o.Object)
	}
	for _, s := range resourceSuites {
		key.Changes = append(key.Changes, s.folder+": "+s.change.what)
	}
	data, err := json.Marshal(key)
	if err != nil {
		return "", fmt.Errorf("the corpus key: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// readRecording is recordFile, which must have been made with want's pins
// and corpus.
func readRecording(want recording) (recording, error) {
	data, err := os.ReadFile(recordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return recording{}, fmt.Errorf("%s is missing: make peers records Kyverno's answers", recordFile)
	}
	if err != nil {
		return recording{}, err
	}
	var rec recording
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return recording{}, fmt.Errorf("%s: %w", recordFile, err)
	}
	if stale := rec.staleFor(want); stale != "" {
		return recording{}, fmt.Errorf("%s was recorded with %s: make peers records Kyverno's answers again", recordFile, stale)
	}
	if len(rec.Answers) == 0 {
		return recording{}, fmt.Errorf("%s holds no answers", recordFile)
	}
	return rec, nil
}

// staleFor says how rec's header differs from want's ("" if it does not).
func (rec recording) staleFor(want recording) string {
	var d []string
	if rec.Pin != want.Pin {
		d = append(d, fmt.Sprintf("another Kyverno pin (Kyverno %s, hack/kyverno %.12s; now %s, %.12s)", rec.Kyverno, rec.Pin, want.Kyverno, want.Pin))
	}
	if rec.KubeAPIServer != want.KubeAPIServer {
		d = append(d, fmt.Sprintf("kube-apiserver %s (now %s)", rec.KubeAPIServer, want.KubeAPIServer))
	}
	if rec.Corpus != want.Corpus {
		d = append(d, fmt.Sprintf("other requests (corpus %.12s; now %.12s)", rec.Corpus, want.Corpus))
	}
	return strings.Join(d, " and ")
}

// write writes rec to recordFile: indented JSON, map keys sorted, one
// line a request.
func (rec recording) write() error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // messages hold < and >: keep them readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return err
	}
	return os.WriteFile(recordFile, b.Bytes(), 0o644)
}
