package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// reportOptions are the flags of the commands that print findings (check,
// audit): the output, the report format of json and yaml (the one the
// background audit writes by default, serve's --reports-api), and whether
// the table lists skips.
type reportOptions struct {
	output      string
	reportsAPI  string
	format      report.Format
	showSkipped bool
}

// addFlags adds -o, --reports-api and --show-skipped; what names the
// command's subjects in --show-skipped's help ("a resource").
func (o *reportOptions) addFlags(f *pflag.FlagSet, what string) {
	f.StringVarP(&o.output, "output", "o", "table", "table, json or yaml (json and yaml are a report in --reports-api's format)")
	f.StringVar(&o.reportsAPI, "reports-api", string(report.DefaultFormat()), "the report API of -o json|yaml: "+report.FormatFlagHelp)
	f.BoolVar(&o.showSkipped, "show-skipped", false, "list policies that do not apply to "+what+" in the table")
}

// validate checks the flags' values, as a usage error.
func (o *reportOptions) validate() error {
	if o.output != "table" && o.output != "json" && o.output != "yaml" {
		return usageError(fmt.Errorf("--output %q: want table, json or yaml", o.output))
	}
	f, err := report.ParseFormat(o.reportsAPI)
	if err != nil {
		return usageError(fmt.Errorf("--reports-api: %w", err))
	}
	o.format = f
	return nil
}

// write prints the findings as the flags ask.
func (o *reportOptions) write(w io.Writer, findings []offline.Finding) error {
	r := report.Build(findings, o.format)
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return report.Table(w, r, report.TableOptions{Colour: isTerminal(w), ShowSkipped: o.showSkipped})
	}
}

// isTerminal is true when w is a character device and NO_COLOR is unset.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
