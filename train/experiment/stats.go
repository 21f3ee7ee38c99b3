package experiment

// Numbers over seeds: summaries of a handful of values, the sign test and
// paired comparisons, and the batch-means standard error of a long,
// correlated sequence.

import (
	"math"

	"github.com/geluproject/gelu/train/report"
)

// Summary describes the finite values of a slice (a diverged run's NaN is
// left out); every field but N is NaN when there are none.
type Summary struct {
	N                      int // finite values
	Mean, Median, Min, Max float64
	SE                     float64 // standard error of the mean, sd/√N (NaN for N < 2)
}

// Summarize returns the Summary of v. The median interpolates between the
// two middle values as report.Quantiles does, so it equals the median line
// of a Band.
func Summarize(v []float64) Summary {
	s := Summary{Mean: math.NaN(), Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), SE: math.NaN()}
	var fin []float64
	for _, x := range v {
		if finite(x) {
			fin = append(fin, x)
		}
	}
	if s.N = len(fin); s.N == 0 {
		return s
	}
	q := Quantiles(fin, 0.5, 0, 1)
	s.Mean, s.Median, s.Min, s.Max = mean(fin), q[0], q[1], q[2]
	if s.N > 1 {
		s.SE = se(fin)
	}
	return s
}

// Median returns the median of the finite values of v (NaN if none).
func Median(v []float64) float64 { return Quantiles(v, 0.5)[0] }

// Quantiles returns the qs-quantiles of the finite values of v, with
// linear interpolation between order statistics (NumPy's default): 0 is
// the minimum, 1 the maximum. They are NaN when v has no finite value or q
// is outside [0, 1].
func Quantiles(v []float64, qs ...float64) []float64 {
	cols := make([][]float64, len(v))
	for i, x := range v {
		cols[i] = []float64{x}
	}
	out := make([]float64, len(qs))
	for k, q := range qs {
		out[k] = math.NaN()
		if len(v) == 0 {
			continue
		}
		if r, err := report.Quantiles(cols, q); err == nil {
			out[k] = r[0][0]
		}
	}
	return out
}

// Range formats Min–Max, both multiplied by scale ("NaN" when there is no
// finite value), for the range column of a table.
func (s Summary) Range(scale float64) string {
	if s.N == 0 {
		return "NaN"
	}
	return report.Format(scale*s.Min) + "–" + report.Format(scale*s.Max)
}

// Set records the median, min and max as key+".median", ".min", ".max".
func (s Summary) Set(r *report.Report, key string) {
	r.Set(key+".median", s.Median)
	r.Set(key+".min", s.Min)
	r.Set(key+".max", s.Max)
}

// SignTest returns P(X ≥ k) for X ~ Binomial(n, ½): the one-sided p-value
// of k successes in n paired trials when both sides are equally likely.
// Up to n = 62 the sum is exact in integers, rounded once; beyond, it is
// summed from log-gamma terms.
func SignTest(k, n int) float64 {
	switch {
	case n < 0 || k > n:
		return 0
	case k <= 0:
		return 1
	case n <= 62:
		var tail, c uint64 = 0, 1 // c = C(n, i)
		for i := 0; i <= n; i++ {
			if i >= k {
				tail += c
			}
			c = c * uint64(n-i) / uint64(i+1) // exact: C(n, i)·(n−i) is divisible by i+1
		}
		return float64(tail) / math.Ldexp(1, n)
	}
	lg := func(n int) float64 { v, _ := math.Lgamma(float64(n)); return v }
	var p float64
	for i := k; i <= n; i++ {
		p += math.Exp(lg(n+1) - lg(i+1) - lg(n-i+1) - float64(n)*math.Ln2)
	}
	return math.Min(p, 1)
}

// Paired compares two quantities measured on the same seeds (or other
// pairing: a[i] and b[i] share everything but the thing compared).
type Paired struct {
	N             int     // pairs where both values are finite
	Lower, Higher int     // of those, pairs with a < b and with a > b (the rest are ties)
	P             float64 // one-sided sign test that a is lower: SignTest(Lower, Lower+Higher)
	PHigher       float64 // the same for a higher: SignTest(Higher, Lower+Higher)
	Mean, SE      float64 // mean of a − b over the N pairs, and its standard error sd/√N (NaN for N < 2)
}

// Compare pairs a[i] with b[i]; pairs where either value is NaN or ±Inf
// (a diverged run) are left out. a and b should have the same length; the
// extra values of the longer are ignored.
func Compare(a, b []float64) Paired {
	var d []float64
	p := Paired{Mean: math.NaN(), SE: math.NaN()}
	for i := range min(len(a), len(b)) {
		if !finite(a[i]) || !finite(b[i]) {
			continue
		}
		d = append(d, a[i]-b[i])
		switch {
		case a[i] < b[i]:
			p.Lower++
		case a[i] > b[i]:
			p.Higher++
		}
	}
	p.N = len(d)
	p.P, p.PHigher = SignTest(p.Lower, p.Lower+p.Higher), SignTest(p.Higher, p.Lower+p.Higher)
	if p.N > 0 {
		p.Mean = mean(d)
	}
	if p.N > 1 {
		p.SE = se(d)
	}
	return p
}

// Verdict checks the claim "a is lower than b" at significance level
// alpha: Confirmed when a is lower in so many pairs that chance would do
// it with probability ≤ alpha, NotConfirmed when b is lower that often,
// Unclear otherwise (always with fewer than log2(1/alpha) pairs).
func (p Paired) Verdict(alpha float64) report.Verdict {
	switch {
	case p.Lower+p.Higher > 0 && p.P <= alpha:
		return report.Confirmed
	case p.Lower+p.Higher > 0 && p.PHigher <= alpha:
		return report.NotConfirmed
	}
	return report.Unclear
}

// MinPairs returns the fewest pairs, all agreeing, that the sign test
// needs to reach p ≤ alpha.
func MinPairs(alpha float64) int {
	n := 1
	for n < 1100 && SignTest(n, n) > alpha {
		n++
	}
	return n
}

// BlockSE returns the batch-means standard error of the mean of v: the
// standard deviation of the means of blocks contiguous blocks (fewer when
// v is short: at least 2 values each) divided by √blocks. Neighbouring
// values of a sequence (losses of overlapping text windows, successive
// steps) are correlated, and sd/√n would understate the error; means of
// long contiguous blocks are nearly independent. NaN with fewer than 4
// values.
func BlockSE(v []float64, blocks int) float64 {
	b := min(blocks, len(v)/2)
	if b < 2 {
		return math.NaN()
	}
	means := make([]float64, b)
	for i := range b {
		means[i] = mean(v[i*len(v)/b : (i+1)*len(v)/b])
	}
	return se(means)
}

// mean is the plain mean (NaN for no values).
func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// se is the standard error of the mean of independent values: the sample
// standard deviation (n − 1 in the denominator) over √n.
func se(v []float64) float64 {
	m, ss := mean(v), 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
