package report

import (
	"math"
	"testing"
)

func TestQuantiles(t *testing.T) {
	// Three points, four runs; the third point has a diverged run (NaN)
	// and the fourth has none finite.
	nan := math.NaN()
	runs := [][]float64{
		{1, 10, 5, nan},
		{2, 10, nan, nan},
		{3, 10, 1, math.Inf(1)},
		{4, 10, 3, nan},
	}
	q, err := Quantiles(runs, 0, 0.25, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Point 0: {1,2,3,4}: position q·3 → 1, 1.75, 2.5, 4 (as numpy.quantile).
	// Point 2: {1,3,5}: position q·2 → 1, 2, 3, 5.
	want := [][]float64{{1, 10, 1, nan}, {1.75, 10, 2, nan}, {2.5, 10, 3, nan}, {4, 10, 5, nan}}
	for k := range want {
		for i := range want[k] {
			g, w := q[k][i], want[k][i]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("quantile %d at point %d = %v, want %v", k, i, g, w)
			}
		}
	}
	if _, err := Quantiles(nil, 0.5); err == nil {
		t.Error("no runs: no error")
	}
	if _, err := Quantiles([][]float64{{1, 2}, {1}}, 0.5); err == nil {
		t.Error("ragged runs: no error")
	}
	if _, err := Quantiles(runs, 1.5); err == nil {
		t.Error("q = 1.5: no error")
	}
	if _, err := Quantiles(runs, nan); err == nil {
		t.Error("q = NaN: no error")
	}
}
