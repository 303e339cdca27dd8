// Package layout_test checks the README's map of the code against the
// tree, so that a newcomer reading it finds every package.
package layout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestPackageTable: every Go package under internal/ and cmd/ has a row
// in the README's package table, and every row names a directory that is
// there.
func TestPackageTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	rows := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		for _, name := range strings.Split(m[1], "`, `") {
			rows[name] = true
		}
	}
	if !rows["internal/engine"] {
		t.Fatalf("no package table found in README.md (%d rows)", len(rows))
	}
	var missing []string
	for _, root := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join("../..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
			rel, _ := filepath.Rel("../..", path)
			if len(goFiles) > 0 && !rows[filepath.ToSlash(rel)] {
				missing = append(missing, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("README.md's package table has no row for %s", p)
	}
	for name := range rows {
		if !strings.HasPrefix(name, "internal/") && !strings.HasPrefix(name, "cmd/") {
			continue
		}
		if fi, err := os.Stat(filepath.Join("../..", name)); err != nil || !fi.IsDir() {
			t.Errorf("README.md's package table names %s, which is not a directory", name)
		}
	}
}
