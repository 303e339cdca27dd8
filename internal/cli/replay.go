package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/replay"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// exitSkipped: some events could not be read or replayed.
const exitSkipped = 3

type replayOptions struct {
	config, candidate string
	files             []string
	namespaceFlags
	namespace  string
	registry   registryFlags
	noFastPath bool
	params     []string
	references []string
	output     string
	reportsAPI string
	events     string
	examples   int
}

func newReplayCommand() *cobra.Command {
	o := replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay -f AUDIT.log [-c POLICIES] [--diff-config CANDIDATE]",
		Short: "Replay the apiserver's audit log through policies: what they would deny, warn or audit",
		Long: "Reads kube-apiserver audit events (audit.k8s.io/v1 Event JSON lines, or EventLists; files,\n" +
			"directories of rotated logs, gzipped or not, - for stdin), rebuilds the admission request of\n" +
			"every write and connect the log records, and decides it as the webhook would. Prints, per\n" +
			"policy, the requests it would deny, warn or audit, by namespace, user and verb. With\n" +
			"--diff-config, what deciding by the candidate policies would change.\n" +
			"Exit status: 0 nothing denied, 1 something denied, 2 usage error or no event read,\n" +
			"3 some events could not be read or replayed (counted, with the reason, in the summary).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", policyFlagHelp)
	f.StringVar(&o.candidate, "diff-config", "", "candidate policies (file or directory) to compare with --config")
	f.StringArrayVarP(&o.files, "filename", "f", nil, "audit log file or directory of rotated logs, gzipped or not, - for stdin (repeatable, read in order)")
	o.namespaceFlags.addFlags(f)
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, as for serve")
	addFastPathFlag(f, &o.noFastPath)
	addRegistryFlags(f, &o.registry)
	f.StringArrayVar(&o.params, "params", nil, paramsFlagHelp)
	f.StringArrayVar(&o.references, "references", nil, referencesFlagHelp)
	f.StringVarP(&o.output, "output", "o", "table", "table, json (the summary), or report (each object's last request, as a report in --reports-api's format, JSON)")
	f.StringVar(&o.reportsAPI, "reports-api", string(report.DefaultFormat()), "the report API of -o report: "+report.FormatFlagHelp)
	f.StringVar(&o.events, "events", "", "also write every request replayed to this file, one JSON object per line")
	f.IntVar(&o.examples, "examples", 5, "requests each policy's tally shows")
	return cmd
}

func (o *replayOptions) run(cmd *cobra.Command) error {
	if len(o.files) == 0 {
		return usageError(errors.New("give the audit log with -f"))
	}
	if o.output != "table" && o.output != "json" && o.output != "report" {
		return usageError(fmt.Errorf("--output %q: want table, json or report", o.output))
	}
	format, err := report.ParseFormat(o.reportsAPI)
	if err != nil {
		return usageError(fmt.Errorf("--reports-api: %w", err))
	}
	// Each path is expanded on its own: one that holds no event is refused by name.
	files := make([][]string, len(o.files))
	for i, p := range o.files {
		if files[i], err = replay.Files([]string{p}); err != nil {
			return usageError(err)
		}
	}
	set, err := policy.Load(o.config)
	if err != nil {
		return usageError(fmt.Errorf("load policies: %w", err))
	}
	var candidate *policy.Set
	if o.candidate != "" {
		if candidate, err = policy.Load(o.candidate); err != nil {
			return usageError(fmt.Errorf("load candidate policies: %w", err))
		}
	}
	given, err := o.namespaceIndex(cmd.InOrStdin())
	if err != nil {
		return usageError(err)
	}
	ext, err := offline.ExternalFor(cmd.Context(), set, offline.Input{ParamPaths: o.params, ReferencePaths: o.references})
	if err != nil {
		return usageError(err)
	}
	images, err := o.registry.verifier()
	if err != nil {
		return usageError(err)
	}
	cfg := replay.Config{
		Set: set, Candidate: candidate, Namespaces: given, Examples: o.examples, Findings: o.output == "report",
		Engine: engine.Options{OwnNamespace: o.namespace, External: ext, NoCELFastPath: o.noFastPath, Images: images},
	}
	var events *bufio.Writer
	var eventsErr error
	if o.events != "" {
		out, err := os.Create(o.events)
		if err != nil {
			return usageError(err)
		}
		defer out.Close()
		events = bufio.NewWriterSize(out, 1<<20)
		enc := json.NewEncoder(events)
		cfg.Decided = func(d *replay.Decision) {
			if err := enc.Encode(d); err != nil && eventsErr == nil {
				eventsErr = err
			}
		}
	}
	r, err := replay.New(cfg)
	if err != nil {
		return usageError(err)
	}
	for i, group := range files {
		lines := 0
		for _, f := range group {
			n, err := r.ReadFile(cmd.Context(), f, cmd.InOrStdin())
			if err != nil {
				return usageError(err)
			}
			lines += n
		}
		if lines == 0 {
			name := o.files[i]
			if name == "-" {
				name = "stdin"
			}
			return usageError(fmt.Errorf("%s: no audit event in it", name))
		}
	}
	if events != nil {
		if err := errors.Join(eventsErr, events.Flush()); err != nil {
			return fmt.Errorf("--events: %w", err)
		}
	}
	s := r.Summary()
	if err := o.write(cmd.OutOrStdout(), s, r, format); err != nil {
		return err
	}
	switch {
	case s.Skipped() > 0:
		return &exitError{code: exitSkipped}
	case s.Denied > 0:
		return &exitError{code: exitDenied}
	}
	return nil
}

func (o *replayOptions) write(w io.Writer, s *replay.Summary, r *replay.Replayer, format report.Format) error {
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "report":
		b, err := json.MarshalIndent(report.Build(r.Findings(), format), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return replay.Table(w, s)
}
