package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tollgate-dev/tollgate/internal/engine"
)

// TableOptions shape the table.
type TableOptions struct {
	// Colour the result column (for terminals only).
	Colour bool
	// ShowSkipped lists policies that did not apply to a resource.
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
func Table(w io.Writer, r *PolicyReport, opts TableOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tPOLICY\tRESULT\tMESSAGE")
	for _, res := range r.Results {
		if res.Result == engine.Skip && !opts.ShowSkipped {
			continue
		}
		ref := res.Resources[0]
		name := ref.Kind + " " + ref.Name
		if ref.Namespace != "" {
			name = ref.Kind + " " + ref.Namespace + "/" + ref.Name
		}
		result := string(res.Result)
		if opts.Colour {
			// Pad before colouring so escape codes do not skew the columns.
			result = colours[res.Result] + fmt.Sprintf("%-5s", result) + "\x1b[0m"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, res.Policy, result, res.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := r.Summary
	_, err := fmt.Fprintf(w, "\n%d pass, %d fail, %d warn, %d error, %d skip\n", s.Pass, s.Fail, s.Warn, s.Error, s.Skip)
	return err
}
