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

// release is set at link time:
//
//	-ldflags "-X github.com/tollgate-dev/tollgate/internal/version.release=v0.1.0"
//
// make image sets it from the VERSION file. Empty in a plain go build.
var release string

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
	return from(release, bi)
}

// from combines the link-time release with the build information.
func from(rel string, bi *debug.BuildInfo) Info {
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
