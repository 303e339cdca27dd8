package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkReplay replays a log made of copies of the captured one, each
// copy's namespaces renamed among 1,000 (so objects are created, changed
// and deleted again, as in a cluster that lives on): 31 events a copy.
// TOLLGATE_REPLAY_EVENTS sets its size (31,000 events unless set);
// TOLLGATE_REPLAY_LOG keeps the log there, for timing `tollgate replay`
// on it (docs/cli.md). Each iteration replays the whole log.
func BenchmarkReplay(b *testing.B) {
	events := 31_000
	if v := os.Getenv("TOLLGATE_REPLAY_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		events = n
	}
	file := os.Getenv("TOLLGATE_REPLAY_LOG")
	if file == "" {
		file = filepath.Join(b.TempDir(), "audit.log")
	}
	written, size := writeLargeLog(b, file, events)
	set := livePolicies(b, "live")
	b.ResetTimer()
	for range b.N {
		s, _ := replayFiles(b, Config{Set: set}, file)
		if s.Events != written {
			b.Fatalf("%d events replayed, want %d", s.Events, written)
		}
	}
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N*written)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
	b.ReportMetric(float64(size)/float64(written), "bytes/event")
}

func writeLargeLog(b *testing.B, file string, events int) (written int, size int64) {
	b.Helper()
	data, err := os.ReadFile(capturedLog)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for k := 0; written < events; k++ {
		ns := []byte(fmt.Sprintf("ns%04d-", k%1000))
		for _, l := range lines {
			if written == events {
				break
			}
			_, _ = w.Write(bytes.ReplaceAll(l, []byte("replay-1-"), ns))
			_ = w.WriteByte('\n')
			written++
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return written, info.Size()
}
