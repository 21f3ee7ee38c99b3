package report

// Choosing a plot's y scale from its data.

import "math"

// WideRange reports whether the positive finite values of the series (Y,
// Lo and Hi) span more than factor from the smallest to the largest: with
// factor 30, where a log y axis helps; over less its ticks (powers of ten
// only) would leave one label or none.
func WideRange(series []Series, factor float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range [][]float64{s.Y, s.Lo, s.Hi} {
			for _, x := range v {
				if x > 0 && !math.IsInf(x, 0) {
					lo, hi = math.Min(lo, x), math.Max(hi, x)
				}
			}
		}
	}
	return hi > factor*lo
}
