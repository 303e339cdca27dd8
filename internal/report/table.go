package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tollgate-dev/tollgate/internal/engine"
)

// TableOptions shape the table.
type TableOptions struct {
	// Colour the result column (for terminals only).
	Colour bool
	// ShowSkipped lists every skip: the policies that did not apply to a
	// resource (which the report itself leaves out) and those whose verdict
	// depends on the request; those a PolicyException lifted are always
	// listed.
	ShowSkipped bool
}

var colours = map[engine.Outcome]string{
	engine.Pass:  "\x1b[32m",
	engine.Fail:  "\x1b[31m",
	engine.Warn:  "\x1b[33m",
	engine.Error: "\x1b[31;1m",
	engine.Skip:  "\x1b[90m",
}

// Table writes one row per result, then the summary.
func Table(w io.Writer, r *Report, opts TableOptions) error {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tPOLICY\tRESULT\tMESSAGE")
	var shown []engine.Outcome
	rows := r.rows
	if rows == nil { // a report not built here: every result applied
		for _, res := range r.Results {
			rows = append(rows, row{Result: res, applies: true})
		}
	}
	for _, rw := range rows {
		res := rw.Result
		if res.Result == engine.Skip && !opts.ShowSkipped && res.Properties["exception"] == "" {
			continue
		}
		ref := res.Resources[0]
		name := ref.Kind + " " + ref.Name
		if ref.Namespace != "" {
			name = ref.Kind + " " + ref.Namespace + "/" + ref.Name
		}
		shown = append(shown, res.Result)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, res.Policy, res.Result, res.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	out := table.String()
	if opts.Colour {
		out = colourResults(out, shown)
	}
	if _, err := io.WriteString(w, out); err != nil {
		return err
	}
	s := r.Summary
	if opts.ShowSkipped {
		s.Skip += r.notApplicable
	}
	_, err := fmt.Fprintf(w, "\n%d pass, %d fail, %d warn, %d error, %d skip\n", s.Pass, s.Fail, s.Warn, s.Error, s.Skip)
	return err
}

// colourResults colours the RESULT cell of each row of an aligned table.
// It runs after tabwriter, which counts escape codes as wide as text: coloured
// cells would push the columns after them apart.
func colourResults(table string, results []engine.Outcome) string {
	lines := strings.SplitAfter(table, "\n")
	col := strings.Index(lines[0], "RESULT")
	var b strings.Builder
	b.WriteString(lines[0])
	for i, l := range lines[1:] {
		if i < len(results) {
			res := string(results[i])
			if end := col + len(res); col >= 0 && end <= len(l) && l[col:end] == res {
				l = l[:col] + colours[results[i]] + res + "\x1b[0m" + l[end:]
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
