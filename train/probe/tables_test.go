package probe

import (
	"math"
	"slices"
	"testing"
)

func TestComparisonCellsAndValues(t *testing.T) {
	// Binary fractions, so that z = (0.75 − 0.25)/0.125 = 4 exactly.
	c := Comparison{Form: HeavyBall, Beta: 0.5, GradVar: 2, GradMeanSq: 3, Ratio: 0.75, RatioSE: 0.125,
		Predicted: 0.375, Expected: 0.25, SecondMomentRatio: 1.5, MeanSlope: 1.75, GradLag1: 0.0625, BufLag1: 0.5,
		Blocks: []float64{0.25, 0.5}}
	want := map[string]float64{"ratio": 0.75, "ratio_se": 0.125, "predicted": 0.375, "expected": 0.25, "z": 4,
		"doc_ratio": 1.5, "mean_slope": 1.75, "grad_lag1": 0.0625, "buf_lag1": 0.5, "grad_var": 2, "grad_mean_sq": 3}
	got := c.Values()
	if len(got) != len(want) {
		t.Errorf("Values has %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Values[%q] = %v, want %v", k, got[k], v)
		}
	}
	cells := c.Cells()
	if len(cells) != len(ComparisonHeader) {
		t.Fatalf("%d cells for %d header columns", len(cells), len(ComparisonHeader))
	}
	// The heavy ball's mean grows as 1/(1 − β) = 2 for β = ½.
	for i, w := range map[int]any{0: 0.5, 1: "heavy_ball", 2: 2.0, 7: 4.0, 10: 2.0, 12: 0.5} {
		if cells[i] != w {
			t.Errorf("cell %d (%s) = %v, want %v", i, ComparisonHeader[i], cells[i], w)
		}
	}
	if n := c.Name(); n != "heavy_ball.b0.5" {
		t.Errorf("Name = %q, want heavy_ball.b0.5", n)
	}
	if n := (Comparison{Form: EMA, Beta: 0.99}).Name(); n != "ema.b0.99" {
		t.Errorf("Name = %q, want ema.b0.99", n)
	}
	// Blocks of 10 steps are centred at 5 and 15; 0.25/0.375 = 2/3.
	s := c.BlockSeries("w", 10)
	if s.Name != "w" || !slices.Equal(s.X, []float64{5, 15}) || len(s.Y) != 2 ||
		math.Abs(s.Y[0]-2.0/3) > 1e-15 || math.Abs(s.Y[1]-4.0/3) > 1e-15 {
		t.Errorf("BlockSeries = %+v, want X [5 15], Y [2/3 4/3]", s)
	}
}

func TestGradName(t *testing.T) {
	s := Summary{Tensors: []string{"w", "b"}, Grad: make([]Totals, 3)}
	var got []string
	for i := range s.Grad {
		got = append(got, s.GradName(i))
	}
	if !slices.Equal(got, []string{"w", "b", "all"}) {
		t.Errorf("GradName over Grad = %v, want [w b all]", got)
	}
}

func TestSlowestBurnIn(t *testing.T) {
	// 0.9^t ≤ 1e-4 from t = ln(1e-4)/ln(0.9) = 87.4…, so 88; 0.99^t from
	// t = 916.4…, so 917.
	bufs := []Buffer{{EMA, 0.9}, {HeavyBall, 0.99}, {EMA, 0.9}}
	if got := SlowestBurnIn(bufs, 1e-4); got != 917 {
		t.Errorf("SlowestBurnIn = %d, want 917", got)
	}
	if got := SlowestBurnIn(bufs[:1], 1e-4); got != 88 {
		t.Errorf("SlowestBurnIn of β = 0.9 = %d, want 88", got)
	}
	if got := SlowestBurnIn(nil, 1e-4); got != 0 {
		t.Errorf("SlowestBurnIn of no buffers = %d, want 0", got)
	}
}
