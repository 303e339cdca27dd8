package replay

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// MaxLine bounds one line of a log: an event longer than this (an object
// far over the apiserver's 3 MiB request limit, or a file that is not a
// log) is counted as malformed and the run goes on.
const MaxLine = 64 << 20

// Line is one event read from a log, or why it could not be read.
type Line struct {
	// Where is file:line (an EventList's items share their line).
	Where string
	Event *auditv1.Event
	// Err says why the line holds no event; Event is nil then.
	Err error
}

// Files expands paths into the log files to read, in order: a directory's
// files sorted by name, which for the apiserver's rotated logs
// (audit-2026-12-06T10-00-00.000.log, ..., audit.log) is oldest first.
// "-" is standard input. A path that yields no file is an error naming it.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no file in it", p)
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// Read calls fn for every event of the file, in order, gzipped or not (by
// its first bytes): JSON lines of audit.k8s.io/v1 Events, as the log
// backend writes them, or EventLists, as the webhook backend sends them
// (one per line, or a whole file of one). It returns how many lines it
// read, and an error only when the file cannot be read at all.
func Read(file string, stdin io.Reader, fn func(Line)) (int, error) {
	var r io.Reader
	if file == "-" {
		r = stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", file, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	if first, _ := br.Peek(2); bytes.Equal(bytes.TrimSpace(first), []byte("{")) && len(first) == 2 && (first[1] == '\n' || first[1] == '\r') {
		return 1, readWhole(file, br, fn)
	}
	n := 0
	for {
		line, err := readLine(br)
		if len(line) > 0 || errors.Is(err, errTooLong) {
			n++
			where := fmt.Sprintf("%s:%d", file, n)
			if errors.Is(err, errTooLong) {
				fn(Line{Where: where, Err: fmt.Errorf("line longer than %d MiB", MaxLine>>20)})
			} else if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
				decode(where, trimmed, fn)
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil && !errors.Is(err, errTooLong) {
			return n, fmt.Errorf("%s: line %d: %w", file, n+1, err)
		}
	}
}

var errTooLong = errors.New("line too long")

// readLine reads one line, without its newline; a line over MaxLine is
// read to its end and dropped, with errTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errTooLong
			}
			return nil, err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// readWhole reads a file that is one JSON document across lines: an
// EventList (or one Event) written indented.
func readWhole(file string, r io.Reader, fn func(Line)) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxLine+1))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > MaxLine {
		fn(Line{Where: file + ":1", Err: fmt.Errorf("one document longer than %d MiB", MaxLine>>20)})
		return nil
	}
	decode(file+":1", data, fn)
	return nil
}

// header is what tells an Event from an EventList.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// decode calls fn for the event, or each event of the list, in data.
func decode(where string, data []byte, fn func(Line)) {
	if bytes.Contains(data[:min(len(data), 256)], []byte(`"EventList"`)) {
		var h header
		if err := json.Unmarshal(data, &h); err != nil {
			fn(Line{Where: where, Err: fmt.Errorf("not JSON: %w", err)})
			return
		}
		if h.Kind == "EventList" {
			if h.APIVersion != auditv1.SchemeGroupVersion.String() {
				fn(Line{Where: where, Err: fmt.Errorf("apiVersion %q: want %s", h.APIVersion, auditv1.SchemeGroupVersion)})
				return
			}
			for _, item := range h.Items {
				decodeEvent(where, item, fn)
			}
			return
		}
	}
	decodeEvent(where, data, fn)
}

func decodeEvent(where string, data []byte, fn func(Line)) {
	var ev auditv1.Event
	if err := json.Unmarshal(data, &ev); err != nil {
		fn(Line{Where: where, Err: fmt.Errorf("not an audit event: %w", err)})
		return
	}
	switch {
	case ev.APIVersion != auditv1.SchemeGroupVersion.String():
		fn(Line{Where: where, Err: fmt.Errorf("apiVersion %q: want %s", ev.APIVersion, auditv1.SchemeGroupVersion)})
	case ev.Kind != "Event":
		fn(Line{Where: where, Err: fmt.Errorf("kind %q: want Event or EventList", ev.Kind)})
	default:
		fn(Line{Where: where, Event: &ev})
	}
}
