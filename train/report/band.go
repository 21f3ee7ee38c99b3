package report

// Pointwise quantiles across repeated runs (seeds), for the median line and
// the shaded band of a Series.

import (
	"fmt"
	"math"
	"slices"
)

// Quantiles returns, for each q in qs, the pointwise q-quantile across
// runs: out[k][i] is the qs[k]-quantile of runs[0][i], runs[1][i], ... .
// Quantiles interpolate linearly between order statistics (NumPy's
// default), so q = 0 and 1 give the min and max, 0.25/0.5/0.75 the
// quartiles and the median. Non-finite values (a diverged run) are left
// out; where no run is finite the result is NaN.
//
//	q, err := report.Quantiles(lossPerSeed, 0.25, 0.5, 0.75)
//	s := report.Series{Name: "GELU", X: steps, Y: q[1], Lo: q[0], Hi: q[2]}
func Quantiles(runs [][]float64, qs ...float64) ([][]float64, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report.Quantiles: no runs")
	}
	n := len(runs[0])
	for i, r := range runs {
		if len(r) != n {
			return nil, fmt.Errorf("report.Quantiles: run %d has %d values, run 0 has %d", i, len(r), n)
		}
	}
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return nil, fmt.Errorf("report.Quantiles: quantile %v, want one in [0, 1]", q)
		}
	}
	out := make([][]float64, len(qs))
	for k := range out {
		out[k] = make([]float64, n)
	}
	col := make([]float64, 0, len(runs))
	for i := 0; i < n; i++ {
		col = col[:0]
		for _, r := range runs {
			if finite(r[i]) {
				col = append(col, r[i])
			}
		}
		slices.Sort(col)
		for k, q := range qs {
			out[k][i] = quantileSorted(col, q)
		}
	}
	return out, nil
}

func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
