package golden

import (
	"strings"
	"testing"
)

func TestDifference(t *testing.T) {
	long := strings.Repeat("a line of a long generated file\n", 400)
	for _, tc := range []struct {
		name      string
		got, want string
		contains  []string
	}{
		{"short, whole", "a\nb\n", "a\nc\n", []string{"--- got\na\nb\n", "--- want\na\nc\n"}},
		{"long, first line that differs", long + "x\n" + long, long + "y\n" + long, []string{"line 401 (of 801 got, 801 want)", "--- got\nx\n--- want\ny"}},
		{"long, want has more", long, long + "more\n", []string{"line 401 (of 400 got, 401 want)", "--- want\nmore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Difference([]byte(tc.got), []byte(tc.want))
			for _, c := range tc.contains {
				if !strings.Contains(d, c) {
					t.Errorf("difference lacks %q:\n%.300s", c, d)
				}
			}
		})
	}
}
