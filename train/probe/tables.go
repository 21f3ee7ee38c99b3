package probe

// A Comparison and a Summary as a report shows them: table cells under a
// header, and summary keys with their values.

import (
	"fmt"

	"github.com/geluproject/gelu/train/report"
)

// ComparisonHeader names the cells of Comparison.Cells.
var ComparisonHeader = []string{"β", "form", "Σ Var(g)", "Σ mean(g)²", "Var(m)/Var(g) measured",
	"stationary prediction", "expected in window", "z", "Var(m) / documents' formula",
	"E[m] slope on E[g]", "predicted slope", "lag-1 corr. of g", "lag-1 corr. of m"}

// Cells returns c as the cells ComparisonHeader names; the ratio is shown
// with its standard error.
func (c Comparison) Cells() []any {
	return []any{c.Beta, c.Form.String(), c.GradVar, c.GradMeanSq, report.FormatPM(c.Ratio, c.RatioSE),
		c.Predicted, c.Expected, c.Z(), c.SecondMomentRatio,
		c.MeanSlope, MeanFactor(c.Form, c.Beta), c.GradLag1, c.BufLag1}
}

// Name is the buffer's part of a summary key: "ema.b0.9", "heavy_ball.b0.99".
func (c Comparison) Name() string { return fmt.Sprintf("%s.b%g", c.Form, c.Beta) }

// Values returns the measurements of c by summary key.
func (c Comparison) Values() map[string]float64 {
	return map[string]float64{"ratio": c.Ratio, "ratio_se": c.RatioSE, "predicted": c.Predicted,
		"expected": c.Expected, "z": c.Z(), "doc_ratio": c.SecondMomentRatio, "mean_slope": c.MeanSlope,
		"grad_lag1": c.GradLag1, "buf_lag1": c.BufLag1, "grad_var": c.GradVar, "grad_mean_sq": c.GradMeanSq}
}

// GradName is the name of s.Grad[i]: its tensor's, or "all" for the
// totals over all tensors.
func (s Summary) GradName(i int) string {
	if i < len(s.Tensors) {
		return s.Tensors[i]
	}
	return "all"
}

// SlowestBurnIn returns the largest BurnIn(β, eps) over bufs: the steps
// after which every one of them has forgotten its start (0 for none).
func SlowestBurnIn(bufs []Buffer, eps float64) int {
	burn := 0
	for _, b := range bufs {
		burn = max(burn, BurnIn(b.Beta, eps))
	}
	return burn
}

// BlockSeries returns the ratio of each block over Predicted against the
// block's centre, for blocks of blockLen steps: 1 where a block measured
// the stationary prediction.
func (c Comparison) BlockSeries(name string, blockLen int) report.Series {
	s := report.Series{Name: name}
	for b, y := range c.Blocks {
		s.X, s.Y = append(s.X, (float64(b)+0.5)*float64(blockLen)), append(s.Y, y/c.Predicted)
	}
	return s
}
