//go:build e2e

package kyvernodiff

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// diffLabel is the namespace label each policy's namespaceSelector is given:
// every policy applies in a namespace of its own, so each request meets one
// policy and its answer (one webhook, one message) is deterministic on both
// sides. The objects of a policy's suite are created in its namespace.
const diffLabel = "kyverno-diff"

// corpusPolicies are the suites of test/corpus/kyverno-policies the
// differential runs: every pod-security-vpol policy, and the best-practices
// and other ones on Pods whose suite has resources of its own (the main
// policy of a suite that has several). (disallow-default-namespace is left
// out: it decides on the namespace, which the differential chooses.)
var corpusPolicies = []string{
	"pod-security-vpol/baseline/disallow-capabilities",
	"pod-security-vpol/baseline/disallow-host-namespaces",
	"pod-security-vpol/baseline/disallow-host-path",
	"pod-security-vpol/baseline/disallow-host-ports",
	"pod-security-vpol/baseline/disallow-host-process",
	"pod-security-vpol/baseline/disallow-privileged-containers",
	"pod-security-vpol/baseline/disallow-proc-mount",
	"pod-security-vpol/baseline/disallow-selinux",
	"pod-security-vpol/baseline/restrict-seccomp",
	"pod-security-vpol/baseline/restrict-sysctls",
	"pod-security-vpol/restricted/disallow-capabilities-strict",
	"pod-security-vpol/restricted/disallow-privilege-escalation",
	"pod-security-vpol/restricted/require-run-as-non-root-user",
	"pod-security-vpol/restricted/require-run-as-nonroot",
	"pod-security-vpol/restricted/restrict-seccomp-strict",
	"pod-security-vpol/restricted/restrict-volume-types",
	"best-practices-vpol/disallow-cri-sock-mount",
	"best-practices-vpol/disallow-helm-tiller",
	"best-practices-vpol/disallow-latest-tag",
	"best-practices-vpol/require-drop-all",
	"best-practices-vpol/require-drop-cap-net-raw",
	"best-practices-vpol/require-labels",
	"best-practices-vpol/require-pod-requests-limits",
	"best-practices-vpol/require-probes",
	"best-practices-vpol/require-ro-rootfs",
	"best-practices-vpol/restrict-image-registries",
	"other-vpol/allowed-annotations",
	"other-vpol/allowed-image-repos",
	"other-vpol/block-ephemeral-containers",
	"other-vpol/check-env-vars",
	"other-vpol/deny-commands-in-exec-probe",
	"other-vpol/disallow-all-secrets",
	"other-vpol/disallow-secrets-from-env-vars",
	"other-vpol/docker-socket-requires-label",
	"other-vpol/enforce-pod-duration",
	"other-vpol/ensure-readonly-hostpath",
	"other-vpol/forbid-cpu-limits",
	"other-vpol/imagepullpolicy-always",
	"other-vpol/limit-containers-per-pod",
	"other-vpol/limit-hostpath-vols",
	"other-vpol/memory-requests-equal-limits",
	"other-vpol/metadata-match-regex",
	"other-vpol/prevent-cr8escape",
	"other-vpol/require-emptydir-requests-limits",
	"other-vpol/require-image-checksum",
	"other-vpol/require-non-root-groups",
	"other-vpol/require-pod-priorityclassname",
	"other-vpol/require-qos-burstable",
	"other-vpol/require-qos-guaranteed",
	"other-vpol/restrict-annotations",
	"other-vpol/restrict-controlplane-scheduling",
	"other-vpol/restrict-deprecated-registry",
	"other-vpol/restrict-node-affinity",
	"other-vpol/restrict-secrets-by-name",
	"other-vpol/restrict-usergroup-fsgroup-id",
}

// kinds are the objects the differential creates: Pods and the Pod
// controllers autogen covers, by kind.
var kinds = map[string]schema.GroupVersionResource{
	"Pod":         {Version: "v1", Resource: "pods"},
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"DaemonSet":   {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"Job":         {Group: "batch", Version: "v1", Resource: "jobs"},
	"CronJob":     {Group: "batch", Version: "v1", Resource: "cronjobs"},
}

// otherKinds are the other objects the resource library's suites create
// (resourceSuites), cluster-scoped when clusterKinds says so.
var (
	otherKinds = map[string]schema.GroupVersionResource{
		"Ingress":                   {Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
		"CertificateSigningRequest": {Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"},
	}
	clusterKinds = map[string]bool{"CertificateSigningRequest": true}
)

// policyCase is one policy (or a NamespacedValidatingPolicy with its
// exceptions) in its namespace, with the objects created there.
type policyCase struct {
	name       string // the policy's name
	namespace  string
	namespaced bool     // a NamespacedValidatingPolicy
	docs       [][]byte // the policy and any exceptions, as applied to both (none: another namespace of a policy)
	objects    []*unstructured.Unstructured
	// execs are Pods (stored before any request) the requests exec into:
	// a CONNECT of pods/exec.
	execs []string
	// The namespace's labels (beside diffLabel) and annotations.
	nsLabels, nsAnnotations map[string]string
}

// corpusCases are every case of the differential: the corpus's, the edge
// cases', the resource library's edge cases' and its suites'.
type corpusCases struct {
	all, resourceEdges, suites []policyCase
	stored                     []*unstructured.Unstructured // stored before any request
}

// loadCases reads every case.
func loadCases(t *testing.T) corpusCases {
	t.Helper()
	corpus, err := loadCorpus(corpusDir())
	if err != nil {
		t.Fatal(err)
	}
	edges, err := loadEdges("testdata/edge-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resourceEdges, err := loadEdges("testdata/resource-edge-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	suites, stored, err := resourceCases()
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(append(corpus, edges...), resourceEdges...), suites...)
	return corpusCases{all: all, resourceEdges: resourceEdges, suites: suites, stored: stored}
}

// loadCorpus reads each suite's policy and resources. The policy is applied
// with validationActions [Deny] (the corpus's are mostly Audit, which admits
// everything) and a namespaceSelector on its namespace; nothing else changes.
func loadCorpus(dir string) ([]policyCase, error) {
	edgeRaw, err := os.ReadFile("testdata/edge-objects.yaml")
	if err != nil {
		return nil, err
	}
	var out []policyCase
	for _, suite := range corpusPolicies {
		name := filepath.Base(suite)
		policy, err := gunzip(filepath.Join(dir, suite, name+".yaml.gz"))
		if err != nil {
			return nil, err
		}
		resources, err := suiteResources(filepath.Join(dir, suite, ".kyverno-test"))
		if err != nil {
			return nil, err
		}
		c := policyCase{name: name, namespace: "kd-" + name}
		doc, err := isolate(policy, name, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", suite, err)
		}
		c.docs = [][]byte{doc}
		// The suite's objects, and the edge cases' too.
		if c.objects, err = objects(append(append(resources, []byte("\n---\n")...), edgeRaw...)); err != nil {
			return nil, fmt.Errorf("%s: %w", suite, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// loadEdges reads a file of edge policies (testdata/edge-policies.yaml,
// testdata/resource-edge-policies.yaml): each ValidatingPolicy or
// NamespacedValidatingPolicy gets a namespace of its own (a namespaced
// policy's is its metadata.namespace, which must be kd-<name>), the
// PolicyExceptions go with the policy they name first, and every policy
// meets every object of testdata/edge-objects.yaml.
func loadEdges(file string) ([]policyCase, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	objRaw, err := os.ReadFile("testdata/edge-objects.yaml")
	if err != nil {
		return nil, err
	}
	var cases []policyCase
	byName := map[string]int{}
	var exceptions []map[string]any
	for _, doc := range splitYAML(raw) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		switch m["kind"] {
		case "PolicyException":
			exceptions = append(exceptions, m)
			continue
		case "NamespacedValidatingPolicy":
			if meta["namespace"] != "kd-"+name {
				return nil, fmt.Errorf("NamespacedValidatingPolicy %s: namespace %v, want kd-%s", name, meta["namespace"], name)
			}
		}
		isolated, err := isolate(doc, name, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		objs, err := objects(objRaw)
		if err != nil {
			return nil, err
		}
		byName[name] = len(cases)
		cases = append(cases, policyCase{name: name, namespace: "kd-" + name, namespaced: m["kind"] == "NamespacedValidatingPolicy", docs: [][]byte{isolated}, objects: objs})
	}
	for _, e := range exceptions {
		refs, _ := e["spec"].(map[string]any)["policyRefs"].([]any)
		ref, _ := refs[0].(map[string]any)
		i, ok := byName[fmt.Sprint(ref["name"])]
		if !ok {
			return nil, fmt.Errorf("exception %v names no edge policy", e["metadata"])
		}
		doc, err := yaml.Marshal(e)
		if err != nil {
			return nil, err
		}
		cases[i].docs = append(cases[i].docs, doc)
	}
	return cases, nil
}

// suiteResources are the documents of the resource files a suite's
// kyverno-test.yaml names.
func suiteResources(dir string) ([]byte, error) {
	raw, err := gunzip(filepath.Join(dir, "kyverno-test.yaml.gz"))
	if err != nil {
		return nil, err
	}
	var suite struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &suite); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(suite.Resources) == 0 {
		return nil, fmt.Errorf("%s: kyverno-test.yaml names no resources", dir)
	}
	var out []byte
	for _, r := range suite.Resources {
		data, err := gunzip(filepath.Join(dir, r+".gz"))
		if err != nil {
			return nil, err
		}
		out = append(append(out, "\n---\n"...), data...)
	}
	return out, nil
}

// isolate gives a policy a namespaceSelector on its namespace's diffLabel
// and, when deny is set, validationActions [Deny].
func isolate(doc []byte, name string, deny bool) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	if m["kind"] != "ValidatingPolicy" && m["kind"] != "NamespacedValidatingPolicy" {
		return nil, fmt.Errorf("kind %v, want a ValidatingPolicy", m["kind"])
	}
	spec, _ := m["spec"].(map[string]any)
	mc, _ := spec["matchConstraints"].(map[string]any)
	if mc == nil || mc["namespaceSelector"] != nil {
		return nil, fmt.Errorf("want matchConstraints without a namespaceSelector")
	}
	mc["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{diffLabel: name}}
	if deny {
		spec["validationActions"] = []any{"Deny"}
	}
	return yaml.Marshal(m)
}

// objects are the documents of kinds the differential creates, without
// namespace (each is created in its policy's). Others (Services,
// Ingresses) are left out.
func objects(raw []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, doc := range splitYAML(raw) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if _, ok := kinds[u.GetKind()]; !ok {
			continue
		}
		u.SetNamespace("")
		key := u.GetKind() + "/" + u.GetName()
		if seen[key] {
			continue // a suite may name a file twice
		}
		seen[key] = true
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetKind() < out[j].GetKind() })
	return out, nil
}

func splitYAML(raw []byte) [][]byte {
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if err != nil {
			return out
		}
		if len(bytes.TrimSpace(doc)) > 0 && strings.TrimSpace(stripComments(doc)) != "" {
			out = append(out, doc)
		}
	}
}

func stripComments(doc []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(z)
}

// corpusDir is test/corpus/kyverno-policies.
func corpusDir() string {
	return filepath.Join(framework.RepoRoot(), "test", "corpus", "kyverno-policies")
}
