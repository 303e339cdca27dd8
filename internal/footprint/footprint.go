// Package footprint owns what tollgate gives back to the system once it has
// started: the heap start-up left behind and, on Linux, the pages of its own
// executable that only start-up touched.
package footprint

import "runtime/debug"

// Release is called once, when a replica has started and is about to serve.
// It collects the start-up garbage and returns the freed heap to the system,
// then drops the mappings of the executable's read-only pages (see
// releaseExecutable). Serving maps again the pages it uses, from the page
// cache, on first use. It returns how many bytes of the executable it
// released (0 where nothing was).
func Release() (int64, error) {
	debug.FreeOSMemory()
	return releaseExecutable()
}
