package manifest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// summary is "file:line String()" per object: what a user sees of each.
func summary(objs []*Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Where()+" "+o.String())
	}
	return out
}

func TestRead(t *testing.T) {
	nginx := filepath.Join("testdata", "nginx.yaml")
	list := filepath.Join("testdata", "list.json")
	dir := filepath.Join("testdata", "dir")
	for _, tc := range []struct {
		name  string
		paths []string
		stdin string
		want  []string
	}{
		{name: "multi-document YAML: leading ---, empty document, --- with a comment",
			paths: []string{nginx},
			want: []string{
				nginx + ":3 Deployment nginx-deployment",
				nginx + ":27 Service web/my-service",
				nginx + ":40 Pod batch/job-runner-*",
			}},
		{name: "a List in JSON gives its items, at the List's line",
			paths: []string{list},
			want: []string{
				list + ":1 ConfigMap default/game-demo",
				list + ":1 Namespace development",
			}},
		{name: "a directory: .yaml, .yml and .json recursively, in lexical order; hidden directories and other files skipped",
			paths: []string{dir},
			want: []string{
				filepath.Join(dir, "namespace.yaml") + ":1 Namespace shop",
				filepath.Join(dir, "nested", "pod.json") + ":1 Pod shop/secret-dotfiles-pod",
				filepath.Join(dir, "nested", "secret.yml") + ":1 Secret shop/dotfile-secret",
			}},
		{name: "stdin",
			paths: []string{"-"},
			stdin: "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: build-robot\n---\n\n\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n  namespace: ci\n",
			want:  []string{"<stdin>:1 ServiceAccount build-robot", "<stdin>:6 ServiceAccount ci/deployer"}},
		{name: "CRLF line ends",
			paths: []string{"-"},
			stdin: "apiVersion: v1\r\nkind: ServiceAccount\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: ServiceAccount\r\nmetadata:\r\n  name: b\r\n",
			want:  []string{"<stdin>:1 ServiceAccount a", "<stdin>:6 ServiceAccount b"}},
		{name: "several paths keep their order",
			paths: []string{list, nginx},
			want: []string{
				list + ":1 ConfigMap default/game-demo",
				list + ":1 Namespace development",
				nginx + ":3 Deployment nginx-deployment",
				nginx + ":27 Service web/my-service",
				nginx + ":40 Pod batch/job-runner-*",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Read(tc.paths, strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := summary(objs); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReadJSON: each object's JSON is the document alone, as the apiserver
// would receive it, with the YAML's values and types.
func TestReadJSON(t *testing.T) {
	objs, err := Read([]string{filepath.Join("testdata", "nginx.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want 3", len(objs))
	}
	var deploy struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Replicas *int `json:"replicas"`
			Template struct {
				Spec struct {
					Containers []struct {
						Image string `json:"image"`
						Ports []struct {
							ContainerPort int `json:"containerPort"`
						} `json:"ports"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(objs[0].JSON, &deploy); err != nil {
		t.Fatalf("JSON of the Deployment: %v\n%s", err, objs[0].JSON)
	}
	if deploy.Kind != "Deployment" || deploy.Spec.Replicas == nil || *deploy.Spec.Replicas != 3 ||
		len(deploy.Spec.Template.Spec.Containers) != 1 || deploy.Spec.Template.Spec.Containers[0].Image != "nginx:1.14.2" ||
		deploy.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort != 80 {
		t.Errorf("the Deployment's JSON lost values: %s", objs[0].JSON)
	}
	if g := objs[0].GVK; g.Group != "apps" || g.Version != "v1" || g.Kind != "Deployment" {
		t.Errorf("GVK = %v", g)
	}
	if strings.Contains(string(objs[0].JSON), "my-service") {
		t.Errorf("the Deployment's JSON holds the next document: %s", objs[0].JSON)
	}
	var pod struct {
		Spec struct {
			Containers []struct {
				Command []string `json:"command"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(objs[2].JSON, &pod); err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.Containers[0].Command; !slices.Equal(got, []string{"sh", "-c", "echo --- not a separator"}) {
		t.Errorf("command = %q", got)
	}
}

// TestReadErrors: problems do not stop the reading; each names file and line.
func TestReadErrors(t *testing.T) {
	bad := filepath.Join("testdata", "bad", "invalid.yaml")
	objs, err := Read([]string{bad, filepath.Join("testdata", "no-such-file.yaml"), filepath.Join("testdata", "list.json")}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	wantObjs := []string{
		bad + ":1 ConfigMap fine",
		bad + ":28 ConfigMap in-list",
		filepath.Join("testdata", "list.json") + ":1 ConfigMap default/game-demo",
		filepath.Join("testdata", "list.json") + ":1 Namespace development",
	}
	if got := summary(objs); !slices.Equal(got, wantObjs) {
		t.Errorf("objects read despite the errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantObjs, "\n"))
	}
	lines := strings.Split(err.Error(), "\n")
	wantErrs := []string{
		// The YAML library names the line of the mapping the stray key
		// breaks (11), not the key's own line (12).
		bad + ":11: invalid YAML: yaml: did not find expected key",
		bad + ":14: not a Kubernetes object: apiVersion and kind are required",
		bad + ":21: invalid YAML: yaml: unmarshal errors:",
		"  key \"name\" already set in map",
		bad + ":23: apiVersion \"apps/v1/extra\": unexpected GroupVersion string: apps/v1/extra",
		// The item of a List is named at the List's line.
		bad + ":28: not a Kubernetes object: apiVersion and kind are required",
		"read manifests: stat " + filepath.Join("testdata", "no-such-file.yaml") + ": no such file or directory",
	}
	if len(lines) != len(wantErrs) {
		t.Fatalf("got %d errors, want %d:\n%s", len(lines), len(wantErrs), err)
	}
	for i, w := range wantErrs {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
}

func TestParseEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		want    []string
		wantErr string
	}{
		{name: "empty file", data: ""},
		{name: "only separators and comments", data: "---\n# nothing\n---\n"},
		{name: "a document marker glued to text is not a separator", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: ---y\n",
			want: []string{"f:1 ConfigMap a"}},
		{name: "--- followed by a tab", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\t\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
			want: []string{"f:1 ConfigMap a", "f:6 ConfigMap b"}},
		{name: "an empty List", data: "apiVersion: v1\nkind: List\nitems: []\n"},
		{name: "a kind ending in List without items is an object", data: "apiVersion: example.com/v1\nkind: AllowList\nmetadata:\n  name: a\n",
			want: []string{"f:1 AllowList a"}},
		{name: "a scalar document", data: "just text\n", wantErr: "f:1: not a Kubernetes object: "},
		{name: "a YAML sequence", data: "- apiVersion: v1\n  kind: Pod\n", wantErr: "f:1: not a Kubernetes object: "},
		{name: "the line of an error in the third document", data: "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n---\napiVersion: v1\nkind: C\nmetadata: [\n",
			want: []string{"f:1 A ", "f:4 B "}, wantErr: "f:9: invalid YAML: yaml: did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Parse("f", []byte(tc.data))
			if got := summary(objs); !slices.Equal(got, tc.want) {
				t.Errorf("objects = %q, want %q", got, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want it to start with %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "locked.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: Pod\n"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := Read([]string{f}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "read manifests: open "+f) {
		t.Errorf("error = %v", err)
	}
}

// TestReadNoObjects: a path that yields no object is an error naming it,
// and gzipped manifests are read, in a directory or given by name.
func TestReadNoObjects(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	write("notes/README.md", []byte("# not a manifest\n"))
	write("comments/only.yaml", []byte("# nothing here\n---\n"))
	zipped := write("zipped/install.yaml.gz", gz(cm))
	write("zipped/deep/more.json.gz", gz(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`))
	broken := write("broken/x.yaml.gz", []byte("apiVersion: v1\nkind: ConfigMap\n"))
	truncated := write("truncated/x.json.gz", gz(cm)[:20])
	for _, tc := range []struct {
		name    string
		paths   []string
		stdin   string
		objects []string
		err     string
	}{
		{name: "an empty directory", paths: []string{empty}, err: "read manifests: " + empty + ": no .yaml, .yml or .json file in it (gzipped or not)"},
		{name: "no manifest file", paths: []string{filepath.Join(dir, "notes")}, err: "no .yaml, .yml or .json file in it"},
		{name: "files without objects", paths: []string{filepath.Join(dir, "comments")}, err: "read manifests: " + filepath.Join(dir, "comments") + ": no object in it"},
		{name: "empty stdin", paths: []string{"-"}, err: "read manifests: stdin holds no object"},
		{name: "gzipped, in a directory", paths: []string{filepath.Join(dir, "zipped")},
			objects: []string{filepath.Join(dir, "zipped", "deep", "more.json.gz") + ":1 ConfigMap b", zipped + ":1 ConfigMap a"}},
		{name: "gzipped, by name", paths: []string{zipped}, objects: []string{zipped + ":1 ConfigMap a"}},
		{name: "one empty path among good ones", paths: []string{zipped, empty}, objects: []string{zipped + ":1 ConfigMap a"}, err: empty + ": no .yaml"},
		{name: "not gzip", paths: []string{broken}, err: "read manifests: " + broken + ": read as gzip, as its name ends in .gz: gzip: invalid header"},
		{name: "truncated gzip", paths: []string{truncated}, err: truncated + ": read as gzip, as its name ends in .gz: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Read(tc.paths, strings.NewReader(tc.stdin))
			if got := summary(objs); !slices.Equal(got, tc.objects) {
				t.Errorf("objects %q, want %q", got, tc.objects)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
		})
	}
}
