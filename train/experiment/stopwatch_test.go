package experiment

import (
	"strings"
	"testing"
)

func TestStopwatch(t *testing.T) {
	var b strings.Builder
	note := Stopwatch(&b, "gelu")
	note("init")
	note("frozen")
	// Padded to 10 and 20 columns; a fresh stopwatch is at 0 s.
	want := "gelu       init                 done at    0s\ngelu       frozen               done at    0s\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	Stopwatch(nil, "quiet")("stage") // writes nothing, does not panic
}

func TestDivergedStep(t *testing.T) {
	for _, tc := range []struct {
		r    Run[int]
		want int
	}{
		{Run[int]{Steps: 20}, 0},
		{Run[int]{Steps: 1, Diverged: "loss is NaN"}, 2},
		{Run[int]{Steps: 0, Diverged: "loss is NaN"}, 1},
	} {
		if got := tc.r.DivergedStep(); got != tc.want {
			t.Errorf("Steps %d, Diverged %q: %d, want %d", tc.r.Steps, tc.r.Diverged, got, tc.want)
		}
	}
}
