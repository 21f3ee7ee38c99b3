package main

import "testing"

// The ratio column reads as a change in words, whichever way it goes (it
// once printed "-6% less" for a memory that grew by 6%).
func TestChange(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		want  string
	}{{0.38, "62% less"}, {1.5, "50% more"}, {1.06, "6% more"}, {1, "0% more"}} {
		if got := change(c.ratio); got != c.want {
			t.Errorf("change(%v) = %q, want %q", c.ratio, got, c.want)
		}
	}
}
