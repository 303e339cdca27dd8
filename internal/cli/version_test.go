package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/version"
)

func TestVersionCommand(t *testing.T) {
	want := version.Get()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		check  func(t *testing.T, stdout string)
	}{
		{name: "text", args: []string{"version"}, check: func(t *testing.T, stdout string) {
			if stdout != want.String()+"\n" {
				t.Errorf("stdout = %q, want %q", stdout, want.String()+"\n")
			}
		}},
		{name: "json", args: []string{"version", "-o", "json"}, check: func(t *testing.T, stdout string) {
			var got version.Info
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		}},
		{name: "unknown output", args: []string{"version", "-o", "yaml"}, code: 2, stderr: `--output "yaml": text or json`},
		{name: "arguments", args: []string{"version", "extra"}, code: 2, stderr: `unknown command "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.code != 0 {
				if !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stderr %q, want it to say %q", stderr, tt.stderr)
				}
				return
			}
			tt.check(t, stdout)
		})
	}
}
