package framework

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Memory reads a process's resident set and its peak (VmRSS, VmHWM) from
// /proc, in bytes.
func Memory(t testing.TB, pid int) (rss, peak int64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}
