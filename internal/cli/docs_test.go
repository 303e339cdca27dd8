package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The flag tables in docs/ give defaults by hand: each default written
// there must be the flag's own.
func TestDocumentedFlagDefaults(t *testing.T) {
	row := regexp.MustCompile("^\\| `--([a-z0-9-]+)`[^|]* \\| `([^`]*)` \\|")
	cases := []struct{ doc, command string }{
		{"../../docs/serving.md", "serve"},
	}
	for _, c := range cases {
		data, err := os.ReadFile(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		cmd, _, err := NewRootCommand().Find([]string{c.command})
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, line := range strings.Split(string(data), "\n") {
			m := row.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			f := cmd.Flags().Lookup(m[1])
			if f == nil {
				t.Errorf("%s documents --%s, which %s does not have", c.doc, m[1], c.command)
				continue
			}
			checked++
			// Defaults that depend on the machine or environment are documented
			// by what they stand for.
			if strings.HasPrefix(m[2], "$") || strings.HasPrefix(m[2], "~") {
				continue
			}
			if f.DefValue != m[2] {
				t.Errorf("%s: --%s default documented as %q, is %q", c.doc, m[1], m[2], f.DefValue)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no flag rows found", c.doc)
		}
	}
}

// TestDocumentedFlagsExist: a flag the docs name on its own (a code span
// that starts with it, as `--reports-api wgpolicyk8s`) is a flag of some
// tollgate command; other tools' flags the docs name so are listed here.
func TestDocumentedFlagsExist(t *testing.T) {
	others := map[string]string{
		"create-namespace":              "helm install",
		"set":                           "helm install",
		"enable-aggregator-routing":     "kube-apiserver",
		"feature-gates":                 "kube-apiserver",
		"admission-control-config-file": "kube-apiserver",
		"insecure-ignore-tlog":          "cosign verify",
		"new-bundle-format":             "cosign sign",
	}
	known := map[string]bool{}
	for _, cmd := range NewRootCommand().Commands() {
		cmd.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	if !known["reports-api"] || !known["kubeconfig"] {
		t.Fatalf("the commands' flags were not read: %d", len(known))
	}
	span := regexp.MustCompile("`--([a-z][a-z0-9-]*)")
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, doc := range append(docs, "../../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				checked++
				if !known[m[1]] && others[m[1]] == "" {
					t.Errorf("%s:%d: --%s is no flag of any tollgate command", doc, i+1, m[1])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d flags found in the docs", checked)
	}
}
