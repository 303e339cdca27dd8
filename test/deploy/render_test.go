package deploy

// Rendering the chart and the kustomize base into objects, and comparing
// two sets of objects field by field, as the chart tests do.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func helmBinary(t *testing.T) string {
	t.Helper()
	h := os.Getenv("TOLLGATE_HELM")
	if h == "" {
		t.Skip("TOLLGATE_HELM is unset: make chart builds the helm pinned in hack/helm/go.mod and sets it")
	}
	return h
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// kustomize renders a kustomization with kubectl, as kubectl apply -k does.
// The ConfigMap generator's content hash is taken off the name, for Helm
// names the ConfigMap plainly (a running tollgate reloads it, no rollout).
func kustomize(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	out := run(t, "kubectl", "kustomize", filepath.Join(root, dir))
	out = regexp.MustCompile(`\btollgate-policies-[a-z0-9]{10}\b`).ReplaceAll(out, []byte("tollgate-policies"))
	return objects(t, out)
}

func helmTemplate(t *testing.T, args ...string) map[string]map[string]any {
	t.Helper()
	args = append([]string{"template", "tollgate", chart, "--namespace", "tollgate-system"}, args...)
	return objects(t, run(t, helmBinary(t), args...))
}

// objects parses a YAML stream into objects by kind/namespace/name, Helm's
// labels taken off.
func objects(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	objs := map[string]map[string]any{}
	for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(stream), -1) {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("parsing %q: %v", doc, err)
		}
		if o == nil {
			continue
		}
		md, _ := o["metadata"].(map[string]any)
		key := fmt.Sprintf("%v/%v/%v", o["kind"], md["namespace"], md["name"])
		if _, dup := objs[key]; dup {
			t.Fatalf("%s twice", key)
		}
		dropHelmLabels(o)
		objs[key] = o
	}
	if len(objs) == 0 {
		t.Fatalf("no objects in:\n%s", stream)
	}
	return objs
}

// dropHelmLabels removes helmLabels from metadata.labels and helmAnnotations
// from metadata.annotations, at the top and in Pod templates; an emptied map
// goes too.
func dropHelmLabels(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				dropHelmLabels(e)
			}
		}
		return
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for field, drop := range map[string]map[string]bool{"labels": helmLabels, "annotations": helmAnnotations} {
			if m, ok := md[field].(map[string]any); ok {
				for k := range m {
					if drop[k] {
						delete(m, k)
					}
				}
				if len(m) == 0 {
					delete(md, field)
				}
			}
		}
	}
	for _, e := range m {
		dropHelmLabels(e)
	}
}

// diff lists every path at which a and b differ.
func diff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			out = append(out, diff(path+"."+k, am[k], bm[k])...)
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: kustomize %s, helm %s", path, show(a), show(b))}
}

func show(v any) string {
	if v == nil {
		return "(absent)"
	}
	j, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(j))
}

// compare fails on any object only one side has and on any field that differs.
func compare(t *testing.T, want, got map[string]map[string]any) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, inW := want[k]
		g, inG := got[k]
		switch {
		case !inG:
			t.Errorf("%s: rendered by kustomize, not by the chart", k)
		case !inW:
			t.Errorf("%s: rendered by the chart, not by kustomize", k)
		default:
			for _, d := range diff("", w, g) {
				t.Errorf("%s: %s", k, d)
			}
		}
	}
}
