package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
