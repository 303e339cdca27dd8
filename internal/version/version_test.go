package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name   string
		linked linked
		bi     *debug.BuildInfo
		want   Info
	}{
		{
			name:   "make image: the release and the commit set at link time",
			linked: linked{"v0.1.0", "c8cc7bf0aaaa", "false"},
			bi:     &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Settings: settings("-buildvcs", "false")},
			want:   Info{Version: "v0.1.0", Revision: "c8cc7bf0aaaa", GoVersion: "go1.27.3", Platform: platform},
		},
		{
			name:   "make image in a tree with changes: link time wins over the go command's record",
			linked: linked{"v0.1.0", "c8cc7bf0aaaa", "true"},
			bi: &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.0.0-20261203064500-c8cc7bf0aaaa+dirty"},
				Settings: settings("vcs.revision", "0000", "vcs.modified", "false")},
			want: Info{Version: "v0.1.0", Revision: "c8cc7bf0aaaa", Modified: true, GoVersion: "go1.27.3", Platform: platform},
		},
		{
			name: "go install at a version",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.2.0"}},
			want: Info{Version: "v0.2.0", Revision: "unknown", GoVersion: "go1.27.3", Platform: platform},
		},
		{
			name: "go build in a tree with changes",
			bi: &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"},
				Settings: settings("vcs.revision", "abc", "vcs.modified", "true")},
			want: Info{Version: "devel", Revision: "abc", Modified: true, GoVersion: "go1.27.3", Platform: platform},
		},
		{
			name: "no build information",
			want: Info{Version: "devel", Revision: "unknown", GoVersion: runtime.Version(), Platform: platform},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := from(tt.linked, tt.bi); got != tt.want {
				t.Errorf("from() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "v0.1.0", Revision: "abc", Modified: true, GoVersion: "go1.27.3", Platform: "linux/arm64"}
	if got, want := i.String(), "tollgate v0.1.0, commit abc (modified), go1.27.3, linux/arm64"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
