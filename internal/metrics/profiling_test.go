package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProfiling: the profiles are served only with --profiling, beside
// /metrics, and a heap profile is a real one (gzipped protobuf).
func TestProfiling(t *testing.T) {
	for _, c := range []struct {
		profiling bool
		path      string
		code      int
		body      string // a prefix of what is served
	}{
		{false, "/metrics", http.StatusOK, "# HELP"},
		{false, "/debug/pprof/", http.StatusNotFound, ""},
		{false, "/debug/pprof/heap", http.StatusNotFound, ""},
		{true, "/metrics", http.StatusOK, "# HELP"},
		{true, "/debug/pprof/", http.StatusOK, "<html>"},
		{true, "/debug/pprof/heap", http.StatusOK, "\x1f\x8b"},
		{true, "/debug/pprof/goroutine?debug=1", http.StatusOK, "goroutine profile:"},
		{true, "/debug/pprof/nosuchprofile", http.StatusNotFound, ""},
	} {
		srv := httptest.NewServer(New().Handler(c.profiling))
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != c.code || !strings.HasPrefix(string(body), c.body) {
			t.Errorf("profiling %v, GET %s: %d %.40q, want %d %q…", c.profiling, c.path, resp.StatusCode, body, c.code, c.body)
		}
	}
}
