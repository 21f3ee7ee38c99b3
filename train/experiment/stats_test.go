package experiment

import (
	"math"
	"math/big"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// binomTail is P(X ≥ k), X ~ Binomial(n, ½), as an exact rational:
// Σ_{i≥k} C(n, i) / 2ⁿ with big integers.
func binomTail(k, n int) float64 {
	sum := new(big.Int)
	for i := max(k, 0); i <= n; i++ {
		sum.Add(sum, new(big.Int).Binomial(int64(n), int64(i)))
	}
	f, _ := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
	return f
}

func TestSignTestAgainstExactBinomialSums(t *testing.T) {
	// Hand-checked values first: 1/32 for 5 of 5, 6/32 for 4 of 5.
	for _, c := range []struct {
		k, n int
		want float64
	}{{0, 3, 1}, {2, 2, 0.25}, {1, 2, 0.75}, {5, 5, 1.0 / 32}, {4, 5, 6.0 / 32}, {9, 10, 11.0 / 1024}, {3, 2, 0}} {
		if got := SignTest(c.k, c.n); got != c.want {
			t.Errorf("SignTest(%d, %d) = %v, want %v", c.k, c.n, got, c.want)
		}
	}
	// Both branches (exact up to 62, log-gamma beyond) against big.Rat.
	for n := 0; n <= 90; n++ {
		for k := 0; k <= n+1; k++ {
			want, got := binomTail(k, n), SignTest(k, n)
			tol := 1e-16 * want
			if n > 62 {
				tol = 1e-12 * want
			}
			if math.Abs(got-want) > tol {
				t.Fatalf("SignTest(%d, %d) = %.17g, exact %.17g", k, n, got, want)
			}
		}
	}
	if got := MinPairs(0.05); got != 5 {
		t.Errorf("MinPairs(0.05) = %d, want 5 (1/16 > 0.05 ≥ 1/32)", got)
	}
	if got := MinPairs(0.01); got != 7 {
		t.Errorf("MinPairs(0.01) = %d, want 7 (1/64 > 0.01 ≥ 1/128)", got)
	}
}

func TestSummarizeAndQuantiles(t *testing.T) {
	nan := math.NaN()
	// Sorted finite values 1, 2, 4, 10: median halfway between 2 and 4,
	// the quartiles at 1.75 and 5.5 order statistics (NumPy's "linear").
	v := []float64{10, nan, 2, 1, math.Inf(1), 4}
	s := Summarize(v)
	sd := math.Sqrt(((1-4.25)*(1-4.25) + (2-4.25)*(2-4.25) + (4-4.25)*(4-4.25) + (10-4.25)*(10-4.25)) / 3)
	if s.N != 4 || s.Median != 3 || s.Min != 1 || s.Max != 10 || s.Mean != 4.25 || math.Abs(s.SE-sd/2) > 1e-15 {
		t.Errorf("Summarize = %+v, want N 4, median 3, min 1, max 10, mean 4.25, SE %v", s, sd/2)
	}
	q := Quantiles(v, 0.25, 0.75, 1.5)
	if q[0] != 1.75 || q[1] != 5.5 || !math.IsNaN(q[2]) {
		t.Errorf("quartiles %v, want 1.75, 5.5 and NaN for q = 1.5", q)
	}
	if m := Median([]float64{7}); m != 7 {
		t.Errorf("median of one value %v", m)
	}
	if e := Summarize([]float64{nan}); e.N != 0 || !math.IsNaN(e.Median) || !math.IsNaN(e.Mean) || e.Range(1) != "NaN" {
		t.Errorf("no finite values: %+v, range %q", e, e.Range(1))
	}
	if got := Summarize([]float64{0.0125, 0.02}).Range(100); got != "1.250–2.000" { // report.Format: 4 significant digits
		t.Errorf("range %q, want 1.250–2.000", got)
	}
}

func TestComparePairsSeeds(t *testing.T) {
	nan := math.NaN()
	// Seed 3 has a NaN (left out), seed 4 a tie: 4 pairs, a lower in 3.
	a := []float64{1, 2, 5, nan, 4}
	b := []float64{2, 3, 4, 1, 4}
	p := Compare(a, b)
	d := []float64{-1, -1, 1, 0}
	m := (d[0] + d[1] + d[2] + d[3]) / 4
	var ss float64
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	se := math.Sqrt(ss / 3 / 4)
	if p.N != 4 || p.Lower != 2 || p.Higher != 1 || p.Mean != m || math.Abs(p.SE-se) > 1e-15 {
		t.Errorf("Compare = %+v, want N 4, lower 2, higher 1, mean %v, SE %v", p, m, se)
	}
	if p.P != 0.5 || p.PHigher != 0.875 { // P(X ≥ 2 | n = 3) = 4/8, P(X ≥ 1) = 7/8
		t.Errorf("p-values %v, %v, want 0.5 and 0.875", p.P, p.PHigher)
	}
	if v := p.Verdict(0.05); v != report.Unclear {
		t.Errorf("verdict %q with 3 untied pairs", v)
	}
	five := []float64{1, 1, 1, 1, 1}
	if v := Compare(five, []float64{2, 2, 2, 2, 2}).Verdict(0.05); v != report.Confirmed {
		t.Errorf("5 of 5 lower: %q", v)
	}
	if v := Compare(five, []float64{0, 0, 0, 0, 0}).Verdict(0.05); v != report.NotConfirmed {
		t.Errorf("5 of 5 higher: %q", v)
	}
	if e := Compare(nil, nil); e.N != 0 || e.P != 1 || !math.IsNaN(e.Mean) || e.Verdict(0.05) != report.Unclear {
		t.Errorf("no pairs: %+v", e)
	}
}

// The batch-means error of independent values is close to sd/√n, it grows
// when neighbours are correlated, and on a tiny input it is the standard
// error of the block means, worked out by hand.
func TestBlockSE(t *testing.T) {
	v := make([]float64, 6400)
	x := uint64(1)
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407
		v[i] = float64(x>>11) / (1 << 53) // uniform: sd = 1/√12
	}
	want := 1 / math.Sqrt(12) / math.Sqrt(float64(len(v)))
	if got := BlockSE(v, 32); math.Abs(got/want-1) > 0.5 {
		t.Errorf("independent: BlockSE = %.3g, want about %.3g", got, want)
	}
	for i := range v { // runs of 100 equal values: 64 independent values
		v[i] = v[i/100*100]
	}
	want = 1 / math.Sqrt(12) / math.Sqrt(64)
	if got := BlockSE(v, 32); math.Abs(got/want-1) > 0.5 {
		t.Errorf("correlated: BlockSE = %.3g, want about %.3g", got, want)
	}
	// 6 values in 3 blocks: means 1.5, 3.5, 8; their mean 13/3; sample
	// variance ((−17/6)² + (−5/6)² + (22/6)²)/2 = 798/72; SE = √(798/72/3).
	if got, want := BlockSE([]float64{1, 2, 3, 4, 7, 9}, 3), math.Sqrt(798.0/72/3); math.Abs(got-want) > 1e-15 {
		t.Errorf("BlockSE by hand: %v, want %v", got, want)
	}
	if got := BlockSE([]float64{1, 2, 3}, 32); !math.IsNaN(got) {
		t.Errorf("3 values: %v, want NaN", got)
	}
}
