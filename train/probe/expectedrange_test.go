package probe

import (
	"math"
	"slices"
	"testing"
)

func TestExpectedRange(t *testing.T) {
	cmps := []Comparison{
		{Form: EMA, Beta: 0.9, Ratio: 0.06, Expected: 0.05, GradLag1: 0.1},    // 1.2
		{Form: HeavyBall, Beta: 0.9, Ratio: 9, Expected: 5, GradLag1: 0.7},    // other form
		{Form: EMA, Beta: 0.99, Ratio: 0.004, Expected: 0.005, GradLag1: 0.3}, // other β
		{Form: EMA, Beta: 0.9, Ratio: 0.045, Expected: 0.05, GradLag1: -0.2},  // 0.9
	}
	lo, hi, lags := ExpectedRange(cmps, EMA, 0.9)
	if math.Abs(lo-0.9) > 1e-12 || math.Abs(hi-1.2) > 1e-12 || !slices.Equal(lags, []float64{0.1, -0.2}) {
		t.Errorf("EMA β=0.9: %v–%v, lags %v; want 0.9–1.2, [0.1 -0.2]", lo, hi, lags)
	}
	if lo, hi, lags := ExpectedRange(cmps, HeavyBall, 0.99); !math.IsInf(lo, 1) || !math.IsInf(hi, -1) || lags != nil {
		t.Errorf("no match: %v, %v, %v; want +Inf, −Inf, none", lo, hi, lags)
	}
}
