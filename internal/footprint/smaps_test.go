//go:build linux

package footprint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCleanMappings(t *testing.T) {
	smaps, err := os.ReadFile(filepath.Join("testdata", "smaps.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       []addrRange
	}{
		// The code and read-only data; not the writable data, not the
		// read-only mapping with anonymous pages (relocated at load), not
		// a shared mapping, not another file.
		{"executable", "/usr/bin/tollgate", []addrRange{{0x400000, 0x21d4000}, {0x21d4000, 0x46fc000}}},
		{"a path with a space", "/usr/bin/tollgate (deleted)", []addrRange{{0x7fc0ea900000, 0x7fc0ea901000}}},
		{"a library", "/usr/lib/x86_64-linux-gnu/libc.so.6", []addrRange{{0x7fc0ea60f000, 0x7fc0ea765000}}},
		{"not mapped", "/usr/bin/other", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cleanMappings(smaps, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %x, want %x", got, tc.want)
			}
		})
	}
}

func TestCleanMappingsBadAddress(t *testing.T) {
	if _, err := cleanMappings([]byte("zz-0400 r-xp 0 fe:00 1 /bin/x\n"), "/bin/x"); err == nil {
		t.Error("want an error for a malformed address")
	}
}

// TestReleaseLowersResidentSet releases this test binary's pages: its
// resident file pages must fall, and the process must go on running
// (what it runs next faults back in).
func TestReleaseLowersResidentSet(t *testing.T) {
	before := residentFile(t)
	released, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after := residentFile(t)
	if released == 0 || after >= before {
		t.Errorf("released %d bytes of mappings; resident file pages %d kB before, %d kB after", released, before, after)
	}
	t.Logf("resident file pages: %d kB before, %d kB after", before, after)
}
