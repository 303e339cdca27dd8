//go:build linux

package footprint

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// residentFile reads RssFile of this process, in kB.
func residentFile(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "RssFile:" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
