package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// findings are what offline.Run could return for testdata/resources.yaml:
// the Pod mutated and judged by three policies, the Job (generateName) with a
// warning and a skip, the Namespace passing, the Widget unknown.
func findings(t *testing.T) []offline.Finding {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "resources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Parse("resources.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 {
		t.Fatalf("got %d objects, want 4", len(objs))
	}
	mutated, err := os.ReadFile(filepath.Join("testdata", "web-mutated.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	patched, err := yaml.YAMLToJSON(mutated)
	if err != nil {
		t.Fatal(err)
	}
	return []offline.Finding{
		{Object: objs[0], Patched: patched, Results: []engine.Result{
			{Policy: "nginx-sidecar", Outcome: engine.Pass, Message: "injected"},
			{Policy: "require-environment", Outcome: engine.Fail, Message: `label "environment" must be one of dev, prod`},
			{Policy: "no-latest-tag", Outcome: engine.Pass},
		}},
		{Object: objs[1], Results: []engine.Result{
			{Policy: "require-environment", Outcome: engine.Skip, Message: "the policy does not match Job"},
			{Policy: "resource-limits", Outcome: engine.Warn, Message: "container pi has no memory limit"},
		}},
		{Object: objs[2], Results: []engine.Result{
			{Policy: "namespace-labels", Outcome: engine.Pass},
		}},
		{Object: objs[3], Err: errors.New("unknown kind example.com/v1, Kind=Widget: tollgate knows the built-in Kubernetes kinds only")},
	}
}

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		format           Format
		apiVersion, kind string
		source           string
		golden           string
	}{
		{OpenReports, "openreports.io/v1alpha1", "Report", "tollgate", "report-openreports.json"},
		{WGPolicy, "wgpolicyk8s.io/v1alpha2", "PolicyReport", "", "report-wgpolicyk8s.json"},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			r := Build(findings(t), tc.format)
			if r.APIVersion != tc.apiVersion || r.Kind != tc.kind || r.Source != tc.source {
				t.Errorf("report is %s %s, source %q; want %s %s, source %q", r.APIVersion, r.Kind, r.Source, tc.apiVersion, tc.kind, tc.source)
			}
			if want := (Summary{Pass: 3, Fail: 1, Warn: 1, Error: 1, Skip: 1}); r.Summary != want {
				t.Errorf("summary = %+v, want %+v", r.Summary, want)
			}
			if len(r.Results) != 7 {
				t.Fatalf("got %d results, want 7", len(r.Results))
			}
			job := r.Results[3].Resources[0]
			if job.Name != "pi-" || job.Namespace != "batch" || job.APIVersion != "batch/v1" || job.Kind != "Job" {
				t.Errorf("the Job's reference = %+v; want batch/v1 Job batch/pi- (its generateName)", job)
			}
			ns := r.Results[5].Resources[0]
			if ns.Namespace != "" || ns.APIVersion != "v1" {
				t.Errorf("the Namespace's reference = %+v", ns)
			}
			widget := r.Results[6]
			if widget.Policy != ManifestPolicy || widget.Result != engine.Error || widget.Properties["file"] != "resources.yaml:38" {
				t.Errorf("the unknown kind's result = %+v", widget)
			}
			js, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), append(js, '\n'))
		})
	}
}

// TestBuildEmpty: no findings is a report with an empty list of results, not
// null: readers of reports index results.
func TestBuildEmpty(t *testing.T) {
	for format, want := range map[Format]string{
		OpenReports: `{"apiVersion":"openreports.io/v1alpha1","kind":"Report","metadata":{"name":"tollgate-check"},"source":"tollgate","summary":{"pass":0,"fail":0,"warn":0,"error":0,"skip":0},"results":[]}`,
		WGPolicy:    `{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":"PolicyReport","metadata":{"name":"tollgate-check"},"summary":{"pass":0,"fail":0,"warn":0,"error":0,"skip":0},"results":[]}`,
	} {
		js, err := json.Marshal(Build(nil, format))
		if err != nil {
			t.Fatal(err)
		}
		if string(js) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", format, js, want)
		}
	}
}

// TestFormats: each format's names, and the flag's values read back.
func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		in                     string
		want                   Format
		apiVersion, ns, scoped string
	}{
		{"openreports", OpenReports, "openreports.io/v1alpha1", "Report", "ClusterReport"},
		{"wgpolicyk8s", WGPolicy, "wgpolicyk8s.io/v1alpha2", "PolicyReport", "ClusterPolicyReport"},
		{"", OpenReports, "openreports.io/v1alpha1", "Report", "ClusterReport"},
	} {
		f, err := ParseFormat(tc.in)
		if err != nil || f != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", tc.in, f, err, tc.want)
			continue
		}
		if f.APIVersion() != tc.apiVersion || f.Kind(false) != tc.ns || f.Kind(true) != tc.scoped {
			t.Errorf("%s: %s %s %s; want %s %s %s", f, f.APIVersion(), f.Kind(false), f.Kind(true), tc.apiVersion, tc.ns, tc.scoped)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("ParseFormat(xml): %v", err)
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts TableOptions
	}{
		{name: "table.txt"},
		{name: "table-skipped.txt", opts: TableOptions{ShowSkipped: true}},
		{name: "table-colour.txt", opts: TableOptions{Colour: true, ShowSkipped: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Table(&buf, Build(findings(t), DefaultFormat()), tc.opts); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(out, "\x1b[") != tc.opts.Colour {
				t.Errorf("escape codes present = %v, want %v", !tc.opts.Colour, tc.opts.Colour)
			}
			if strings.Contains(out, "require-environment  skip") != (tc.opts.ShowSkipped && !tc.opts.Colour) {
				t.Errorf("the skipped row is shown = %v, want %v", !tc.opts.ShowSkipped, tc.opts.ShowSkipped)
			}
			golden.Check(t, filepath.Join("testdata", tc.name), buf.Bytes())
		})
	}
}

// TestTableColumns: with colour, the table is the one without, escape codes
// aside: the columns line up on a terminal. (tabwriter counts escape codes as
// text; colouring before aligning pushed MESSAGE right by the codes' length,
// by a different amount for "error" than for the others and for the header.)
func TestTableColumns(t *testing.T) {
	var plain, colour bytes.Buffer
	r := Build(findings(t), DefaultFormat())
	if err := Table(&plain, r, TableOptions{ShowSkipped: true}); err != nil {
		t.Fatal(err)
	}
	if err := Table(&colour, r, TableOptions{ShowSkipped: true, Colour: true}); err != nil {
		t.Fatal(err)
	}
	stripped := colour.String()
	for _, c := range colours {
		stripped = strings.ReplaceAll(stripped, c, "")
	}
	stripped = strings.ReplaceAll(stripped, "\x1b[0m", "")
	pl := strings.Split(plain.String(), "\n")
	for i, l := range strings.Split(stripped, "\n") {
		if i >= len(pl) {
			t.Fatalf("the coloured table has more lines")
		}
		if l != pl[i] {
			t.Errorf("line %d\ncolour: %q\nplain:  %q", i, l, pl[i])
		}
	}
}

func TestPatches(t *testing.T) {
	var buf bytes.Buffer
	if err := Patches(&buf, findings(t)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, "--- resources.yaml:"); n != 1 {
		t.Errorf("%d diffs, want 1 (only the Pod was mutated)", n)
	}
	for _, want := range []string{"--- resources.yaml:1 Pod shop/web\n", "+++ mutated\n", "+    environment: dev\n", "+  - image: nginx:1.12.2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	golden.Check(t, filepath.Join("testdata", "patches.diff"), buf.Bytes())
}

func TestPatchesNone(t *testing.T) {
	f := findings(t)
	f[0].Patched = nil
	var buf bytes.Buffer
	if err := Patches(&buf, f); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("output without mutations: %q", buf.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	if err := Table(failingWriter{}, Build(findings(t), DefaultFormat()), TableOptions{}); err == nil {
		t.Error("Table: no error from a failing writer")
	}
	if err := Patches(failingWriter{}, findings(t)); err == nil {
		t.Error("Patches: no error from a failing writer")
	}
}

// TestExemptedRows: a result a PolicyException made skip names it in the
// report's properties and is listed in the table even without ShowSkipped;
// a plain skip is not. Objects read from a cluster have no file property.
func TestExemptedRows(t *testing.T) {
	obj := &manifest.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "shop", Name: "legacy"}
	r := Build([]offline.Finding{{Object: obj, Allowed: true, Results: []engine.Result{
		{Policy: "require-team", Outcome: engine.Skip, Message: "exempted by PolicyException legacy: retired", Exception: "legacy"},
		{Policy: "no-latest", Outcome: engine.Skip, Message: "does not match the request"},
	}}}, DefaultFormat())
	if got := r.Results[0].Properties; len(got) != 1 || got["exception"] != "legacy" {
		t.Errorf("properties of the exempted result = %v", got)
	}
	if got := r.Results[1].Properties; got != nil {
		t.Errorf("properties of the plain skip = %v, want none", got)
	}
	var out bytes.Buffer
	if err := Table(&out, r, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "require-team  skip    exempted by PolicyException legacy") || strings.Contains(out.String(), "no-latest") {
		t.Errorf("table:\n%s", out.String())
	}
}
