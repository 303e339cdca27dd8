package footprint

import (
	"fmt"
	"os"
	"syscall"
)

// releaseExecutable tells the kernel that tollgate no longer needs the
// pages of its executable's read-only mappings (code and read-only data)
// that it has touched: madvise(MADV_DONTNEED) unmaps them from the process;
// they stay in the page cache and fault back in on next use. Package
// initialisation runs code and reads type data all over the binary
// (client-go's API scheme registers every API group), and the kernel maps
// file pages around each one touched, so that they count in the resident
// set although serving never uses most of them again.
//
// Only mappings without anonymous pages are released (cleanMappings): in
// one that has some (relocations written at load time, or a debugger's
// breakpoints), MADV_DONTNEED would discard the process's own changes.
func releaseExecutable() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("find the executable: %w", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("read the mappings: %w", err)
	}
	ranges, err := cleanMappings(smaps, exe)
	if err != nil {
		return 0, err
	}
	var released int64
	for _, r := range ranges {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, errno)
		}
		released += int64(r.end - r.start)
	}
	return released, nil
}
