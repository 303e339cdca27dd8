//go:build linux

package footprint

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// addrRange is one mapping's addresses, [start, end).
type addrRange struct{ start, end uintptr }

// cleanMappings reads the text of /proc/PID/smaps and returns the mappings
// of path that are private, not writable and hold no anonymous page: the
// pages that can be dropped and read again from the file unchanged.
func cleanMappings(smaps []byte, path string) ([]addrRange, error) {
	var out []addrRange
	var cur *addrRange // the mapping being read, while it qualifies
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: address perms offset dev inode [path]
			if cur != nil {
				out = append(out, *cur)
			}
			cur = nil
			r, ok, err := header(f, path)
			if err != nil {
				return nil, fmt.Errorf("mapping %q: %w", line, err)
			}
			if ok {
				cur = &r
			}
			continue
		}
		if cur != nil && f[0] == "Anonymous:" && (len(f) < 2 || f[1] != "0") {
			cur = nil
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out, sc.Err()
}

// header reads a mapping's header line and tells whether it maps path
// privately and read-only.
func header(f []string, path string) (addrRange, bool, error) {
	if len(f) < 6 || strings.Join(f[5:], " ") != path {
		return addrRange{}, false, nil
	}
	if perms := f[1]; len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
		return addrRange{}, false, nil
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return addrRange{}, false, fmt.Errorf("no address range")
	}
	start, err := strconv.ParseUint(lo, 16, 64)
	if err != nil {
		return addrRange{}, false, err
	}
	end, err := strconv.ParseUint(hi, 16, 64)
	if err != nil {
		return addrRange{}, false, err
	}
	return addrRange{uintptr(start), uintptr(end)}, true, nil
}
