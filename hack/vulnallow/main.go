// Command vulnallow reads govulncheck's JSON stream (govulncheck -format
// json) on stdin and fails when tollgate's code calls a vulnerable symbol
// whose advisory is not in the allow file given as its argument. make
// vulncheck runs it.
//
// The allow file holds one advisory a line, "GO-YYYY-NNNN reason"; the
// reason is required. It is for advisories about a Kubernetes component
// (the kube-apiserver, the kubelet) filed against the whole k8s.io/kubernetes
// module with no fixed version: govulncheck reports every package of that
// module as affected, so tollgate's use of its API types and generated
// defaulting (internal/defaulting) is flagged although it runs none of the
// component's code. Every other finding still fails the run, and an allowed
// advisory that no longer occurs is reported, so the list stays current.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// message is the part of govulncheck's JSON messages read here.
type message struct {
	Finding *struct {
		OSV   string `json:"osv"`
		Trace []struct {
			Module   string `json:"module"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: govulncheck -format json ... | vulnallow ALLOWFILE")
		os.Exit(2)
	}
	allowed, err := readAllow(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulnallow:", err)
		os.Exit(2)
	}
	called, err := calledAdvisories(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulnallow:", err)
		os.Exit(2)
	}
	failed := false
	for _, id := range sortedKeys(called) {
		if reason, ok := allowed[id]; ok {
			fmt.Printf("allowed: %s (%s): %s\n", id, called[id], reason)
			continue
		}
		fmt.Printf("VULNERABLE: %s, reached through %s: see https://pkg.go.dev/vuln/%s\n", id, called[id], id)
		failed = true
	}
	for _, id := range sortedKeys(allowed) {
		if _, ok := called[id]; !ok {
			fmt.Printf("note: %s, allowed in %s, is not found in this scan\n", id, os.Args[1])
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("no vulnerable symbol called, apart from %d allowed advisories\n", len(called))
}

// readAllow reads "ID reason" lines; blank lines and # comments are skipped.
func readAllow(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(id, "GO-") || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want \"GO-YYYY-NNNN reason\", got %q", path, i+1, line)
		}
		out[id] = strings.TrimSpace(reason)
	}
	return out, nil
}

// calledAdvisories returns the advisories of findings whose trace reaches a
// function (govulncheck's symbol level: the code calls it), each with the
// module it is in.
func calledAdvisories(r io.Reader) (map[string]string, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	out := map[string]string{}
	seen := false
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("read govulncheck's JSON: %w", err)
		}
		seen = true
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		out[f.OSV] = f.Trace[0].Module
	}
	if !seen {
		return nil, errors.New("no govulncheck output on stdin")
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
