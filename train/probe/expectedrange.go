package probe

import "math"

// ExpectedRange summarizes comparisons made in several runs (one per
// activation, say) of the buffers of form f and β beta: the smallest and
// largest measured/expected, Ratio/Expected (1 where a window of i.i.d.
// gradients would put it; +Inf and −Inf when none matches), and the
// gradients' lag-1 autocorrelations of those comparisons, in order.
func ExpectedRange(cmps []Comparison, f Form, beta float64) (lo, hi float64, lags []float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range cmps {
		if c.Form == f && c.Beta == beta {
			q := c.Ratio / c.Expected
			lo, hi, lags = math.Min(lo, q), math.Max(hi, q), append(lags, c.GradLag1)
		}
	}
	return lo, hi, lags
}
