package report

import "testing"

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		yes, no bool
		want    Verdict
	}{{true, false, Confirmed}, {true, true, Confirmed}, {false, true, NotConfirmed}, {false, false, Unclear}} {
		if got := Decide(tc.yes, tc.no); got != tc.want {
			t.Errorf("Decide(%v, %v) = %q, want %q", tc.yes, tc.no, got, tc.want)
		}
	}
}
