package experiment

import (
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestCheckNames(t *testing.T) {
	valid := func(s string) bool { return s == "x" || s == "y" }
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"x", "y"}, ""},
		{[]string{"x", "z"}, `-l "z": want a comma-separated list of distinct names from x, y`},
		{[]string{"y", "y"}, `-l "y": want a comma-separated list of distinct names from x, y`},
		{nil, "-l is empty: want at least one of x, y"},
	} {
		err := CheckNames("l", tc.names, valid, "x, y")
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("CheckNames(%q): %v, want %q", tc.names, err, tc.want)
		}
	}
}

// "every setting in A is lower than every one in B" holds only when every
// pair does, fails when one pair goes the other way, and is not judged
// when a setting did not run.
func TestAllLower(t *testing.T) {
	vals := map[string][]float64{
		"lo": {1, 1, 1, 1, 1, 1}, "mid": {2, 2, 2, 2, 2, 2}, "hi": {3, 3, 3, 3, 3, 3}, "mixed": {0, 4, 0, 4, 0, 4},
	}
	get := func(n string) []float64 { return vals[n] }
	for _, tc := range []struct {
		a, b  []string
		want  report.Verdict
		ok    bool
		pairs int
	}{
		{[]string{"lo", "mid"}, []string{"hi"}, report.Confirmed, true, 2},
		{[]string{"lo"}, []string{"mid", "mixed"}, report.Unclear, true, 2},
		{[]string{"lo", "hi"}, []string{"mid"}, report.NotConfirmed, true, 2},
		{[]string{"lo"}, []string{"hi", "absent", "mid"}, report.Unclear, false, 1},
	} {
		pairs, v, ok := AllLower(tc.a, tc.b, get, 0.05)
		if v != tc.want || ok != tc.ok || len(pairs) != tc.pairs {
			t.Errorf("%v < %v: %q, %v, %d pairs; want %q, %v, %d", tc.a, tc.b, v, ok, len(pairs), tc.want, tc.ok, tc.pairs)
		}
	}
}

func TestNewGridSeeds(t *testing.T) {
	g := NewGrid(Flags{Out: "o", Seed: 7, Seeds: 3, Workers: 2}, []string{"a"}, func(s string) string { return s }, "loss")
	if len(g.Seeds) != 3 || g.Seeds[0] != 7 || g.Seeds[2] != 9 || g.Dir != "o" || g.Workers != 2 || g.Metrics[0] != "loss" {
		t.Errorf("NewGrid: %+v", g)
	}
}
