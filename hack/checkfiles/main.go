// Command checkfiles fails when a file tracked in git is a compiled executable
// or is larger than 1 MiB (make lint runs it from the repository root). Build
// outputs and big blobs belong in .gitignore or the cache directory, not in the
// history every clone downloads.
//
// A compiled executable is a file that starts with the magic bytes of one:
// ELF (7f 'E' 'L' 'F'), Mach-O (fe ed fa ce/cf, either byte order, and the
// fat header ca fe ba be) or PE ('M' 'Z'). The exec bit is not the rule:
// scripts such as .ci/run carry it on purpose and are small text files.
//
// The content judged is the one staged in git's index (git ls-files --stage,
// read with one git cat-file --batch), that is, what a commit would record.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

const limit = 1 << 20 // 1 MiB

var magics = []struct {
	prefix []byte
	kind   string
}{
	{[]byte{0x7f, 'E', 'L', 'F'}, "ELF"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "Mach-O"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "Mach-O"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "Mach-O"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "Mach-O"},
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "Mach-O universal"},
	{[]byte{'M', 'Z'}, "PE"},
}

func main() {
	bad, err := check()
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkfiles:", err)
		os.Exit(2)
	}
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintln(os.Stderr, b)
		}
		fmt.Fprintln(os.Stderr, "checkfiles: git rm --cached these and ignore them in .gitignore: no compiled executables and nothing over 1 MiB in git")
		os.Exit(1)
	}
}

// check returns one line for each tracked file that breaks the rule.
func check() ([]string, error) {
	list, err := exec.Command("git", "ls-files", "-z", "--stage").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}

	cat := exec.Command("git", "cat-file", "--batch")
	cat.Stderr = os.Stderr
	stdin, err := cat.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cat.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cat.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	out := bufio.NewReaderSize(stdout, 64<<10)

	var bad []string
	for _, entry := range bytes.Split(list, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(string(entry), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unexpected line %q", entry)
		}
		mode, object := fields[0], fields[1]
		if mode == "160000" { // a submodule: a commit, not a file
			continue
		}
		if _, err := fmt.Fprintln(stdin, object); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		// "<object> blob <size>\n<content>\n"
		header, err := out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		h := strings.Fields(header)
		if len(h) != 3 {
			return nil, fmt.Errorf("git cat-file %s: %q", object, strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(h[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git cat-file %s: %q", object, strings.TrimSpace(header))
		}
		head, err := out.Peek(int(min(size, 4)))
		if err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", object, err)
		}
		var why []string
		if kind := executable(head); kind != "" {
			why = append(why, "compiled executable ("+kind+")")
		}
		if size > limit {
			why = append(why, fmt.Sprintf("larger than 1 MiB (%d bytes)", size))
		}
		if len(why) > 0 {
			bad = append(bad, path+": "+strings.Join(why, ", "))
		}
		if _, err := io.CopyN(io.Discard, out, size+1); err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", object, err)
		}
	}
	stdin.Close()
	if err := cat.Wait(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return bad, nil
}

// executable names the executable format whose magic bytes head starts with, or returns "".
func executable(head []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(head, m.prefix) {
			return m.kind
		}
	}
	return ""
}
