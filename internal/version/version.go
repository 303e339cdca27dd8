// Package version says which build of tollgate is running: the release,
// set at link time by make image, and the commit, the state of the tree it
// was built from, the Go release and the platform, read from the build
// information the go command writes into every binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// release, revision and modified are set at link time by make image
// (hack/image), which reads them from VERSION and git:
//
//	-ldflags "-X github.com/tollgate-dev/tollgate/internal/version.release=v0.1.0 ..."
//
// In a plain go build they are empty, and the go command's own record of
// the commit (vcs.revision, vcs.modified) is used where it wrote one
// (-buildvcs, off on machines that set GOFLAGS=-buildvcs=false).
var release, revision, modified string

// Info is one build of tollgate.
type Info struct {
	// Version is the release (VERSION, as make image sets it), else the
	// module version the go command recorded (go install ...@v1.2.3, or a
	// pseudo-version of the commit), else "devel".
	Version string `json:"version"`
	// Revision is the commit the binary was built from, "unknown" when it
	// was built outside a git checkout or with -buildvcs=false.
	Revision string `json:"revision"`
	// Modified is true when the tree had uncommitted changes.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get reads the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(linked{release, revision, modified}, bi)
}

// linked is what was set at link time.
type linked struct{ release, revision, modified string }

// from combines what was set at link time with the build information.
func from(l linked, bi *debug.BuildInfo) Info {
	rel := l.release
	i := Info{Version: rel, Revision: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if l.revision != "" {
		i.Revision = l.revision
		i.Modified = l.modified == "true"
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	return i
}

// String is the one line `tollgate version` prints.
func (i Info) String() string {
	rev := i.Revision
	if i.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("tollgate %s, commit %s, %s, %s", i.Version, rev, i.GoVersion, i.Platform)
}
