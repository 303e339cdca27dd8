//go:build e2e

package kyvernodiff

import (
	"strings"
	"testing"
)

// TestRecordingKeyed: recordFile was recorded for the requests the
// differential makes now, with the pinned Kyverno and kube-apiserver; a
// change of any of them is caught, naming make peers.
func TestRecordingKeyed(t *testing.T) {
	c := loadCases(t)
	cases, stored := c.all, c.stored
	key, err := recordKey(cases, stored)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := readRecording(key)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Changed) == 0 {
		t.Errorf("%s holds no answers after the change", recordFile)
	}
	changedObject := func() {
		o := cases[0].objects[0]
		o.SetLabels(map[string]string{"kd-changed": "true"})
	}
	for _, tt := range []struct {
		name   string
		change func(*recording)
		want   string
	}{
		{"another Kyverno", func(r *recording) { r.Pin = "0" + r.Pin[1:] }, "another Kyverno pin"},
		{"another apiserver", func(r *recording) { r.KubeAPIServer = "v1.99.0" }, "kube-apiserver v1.37"},
		{"another request", func(r *recording) {
			changedObject()
			k, err := recordKey(cases, stored)
			if err != nil {
				t.Fatal(err)
			}
			r.Corpus = k.Corpus
		}, "other requests"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := key
			tt.change(&want)
			_, err := readRecording(want)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "make peers") {
				t.Errorf("got %v, want an error with %q naming make peers", err, tt.want)
			}
		})
	}
}
