//go:build !linux

package footprint

// releaseExecutable does nothing outside Linux.
func releaseExecutable() (int64, error) { return 0, nil }
