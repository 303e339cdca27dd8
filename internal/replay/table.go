package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Table prints the summary for people: the counts, each policy's tally
// with its examples, what could not be replayed and, with a candidate,
// what would change.
func Table(w io.Writer, s *Summary) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%d events read from %d files: %d admission requests (writes and connects), %d replayed, %d matched by no policy.\n",
		s.Events, s.Files, s.Requests, s.Replayed, s.NotMatched)
	fmt.Fprintf(b, "Replayed: %d allowed (%d with warnings), %d denied.\n", s.Allowed, s.Warned, s.Denied)
	if n := s.Skipped(); n > 0 {
		fmt.Fprintf(b, "Set aside: %d (reasons below).\n", n)
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	if len(s.Policies) > 0 {
		fmt.Fprintln(tw, "\nPOLICY\tDENIED\tWARNED\tAUDITED\tERRORS\tNAMESPACES\tUSERS\tVERBS")
		for _, p := range s.Policies {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", p.Policy, p.Denied, p.Warned, p.Audited, p.Errors,
				top(p.ByNamespace), top(p.ByUser), top(p.ByVerb))
		}
		fmt.Fprintln(tw, "\nPOLICY\tRESULT\tREQUEST\tUSER\tLIVE\tWHERE\tMESSAGE")
		for _, p := range s.Policies {
			for _, e := range p.Examples {
				dry := ""
				if e.DryRun {
					dry = " (dry run)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s %s %s%s\t%s\t%d\t%s\t%s\n", p.Policy, e.Result, e.Verb, e.Resource, e.Object, dry, e.User, e.LiveCode, e.Where, oneLine(e.Message))
			}
		}
	}
	if len(s.NotReplayable) > 0 || len(s.Malformed) > 0 {
		fmt.Fprintln(tw, "\nSET ASIDE\tCOUNT\tFIRST\tREASON")
		for _, r := range s.NotReplayable {
			fmt.Fprintf(tw, "not replayable\t%d\t%s\t%s\n", r.Count, r.First, r.Reason)
		}
		for _, r := range s.Malformed {
			fmt.Fprintf(tw, "malformed\t%d\t%s\t%s\n", r.Count, r.First, r.Reason)
		}
	}
	if len(s.UnknownNamespaces) > 0 {
		fmt.Fprintf(tw, "\nNamespaces the log does not show created, none given (--namespaces): policies saw only their name label: %s\n", strings.Join(s.UnknownNamespaces, ", "))
	}
	if d := s.Diff; d != nil {
		fmt.Fprintf(tw, "\nWith the candidate policies: %d newly denied, %d no longer denied, %d denied in other words, %d with other warnings.\n",
			d.NewlyDenied, d.NoLongerDenied, d.MessageChanged, d.WarningsChanged)
		if len(d.Policies) > 0 {
			fmt.Fprintln(tw, "POLICY\tDENIED\tWARNED\tAUDITED\tERRORS")
			for _, c := range d.Policies {
				fmt.Fprintf(tw, "%s\t%d -> %d\t%d -> %d\t%d -> %d\t%d -> %d\n", c.Policy, c.Before.Denied, c.After.Denied,
					c.Before.Warned, c.After.Warned, c.Before.Audited, c.After.Audited, c.Before.Errors, c.After.Errors)
			}
		}
		if len(d.Examples) > 0 {
			fmt.Fprintln(tw, "\nCHANGE\tREQUEST\tWHERE\tNOW\tWITH THE CANDIDATE")
			for _, e := range d.Examples {
				fmt.Fprintf(tw, "%s\t%s %s %s\t%s\t%s\t%s\n", e.Change, e.Verb, e.Resource, e.Object, e.Where, answer(e.Before), answer(e.After))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// top is the three largest counts of a tally, "a (3), b (1)".
func top(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for i, k := range keys {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("+%d more", len(keys)-3))
			break
		}
		name := k
		if name == "" {
			name = "(cluster)"
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", name, m[k]))
	}
	return strings.Join(parts, ", ")
}

func answer(o Outcome) string {
	if o.Allowed {
		if len(o.Warnings) > 0 {
			return "allowed, warning: " + oneLine(strings.Join(o.Warnings, "; "))
		}
		return "allowed"
	}
	return "denied: " + oneLine(o.Message)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
