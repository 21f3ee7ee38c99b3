package main

// Part 1: E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1), by
// quadrature, and a plot of the integrand f'(x)²·φ(x).

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

func derivStats(r *report.Report, c config, m measured) error {
	var rows [][]any
	for _, a := range ops.All() {
		sq := func(x float64) float64 { d := a.Deriv(x); return d * d }
		e1, err := ops.NormalExpectation(a.Deriv, a.Breakpoints()...)
		if err != nil {
			return err
		}
		e2, err := ops.NormalExpectation(sq, a.Breakpoints()...)
		if err != nil {
			return err
		}
		v, err := ops.NormalVariance(a.Deriv, a.Breakpoints()...)
		if err != nil {
			return err
		}
		k := "normal." + key(a)
		set(r, m, k+".E_d1", e1.Value)
		set(r, m, k+".E_d1sq", e2.Value)
		set(r, m, k+".Var_d1", v.Value)
		rows = append(rows, []any{label(a), report.FormatPM(e1.Value, e1.Err), report.FormatPM(e2.Value, e2.Err), report.FormatPM(v.Value, v.Err)})
	}
	r.Section("1. The activation's derivative under a unit-Gaussian pre-activation")
	r.Text(fmt.Sprintf("X ~ N(0, 1); adaptive Gauss–Kronrod quadrature (`ops.NormalExpectation`, `ops.NormalVariance`) ± its error estimate. "+
		"E[f'(X)²] is the second moment of f'(X), not its variance: Var[f'(X)] = E[f'(X)²] − E[f'(X)]². For GELU, "+
		"GELU'(x) + GELU'(−x) = 1 makes E[GELU'(X)] = ½ exactly, as for ReLU, so GELU is lower than ReLU by the same amount in both: "+
		"%s in E[f'²] and %s in Var[f'].", report.Format(m["normal.relu.E_d1sq"]-m["normal.gelu.E_d1sq"]), report.Format(m["normal.relu.Var_d1"]-m["normal.gelu.Var_d1"])))
	if err := r.Table("normal_derivative", []string{"activation", "E[f'(X)]", "E[f'(X)²]", "Var[f'(X)]"}, rows); err != nil {
		return err
	}
	roots, err := ops.GELU.Roots(1, -5, 0)
	if err != nil || len(roots) != 1 {
		return fmt.Errorf("GELU' has roots %v in [−5, 0] (%v), want one", roots, err)
	}
	root := roots[0]
	var series []report.Series
	for _, a := range ops.All() {
		s := report.Series{Name: label(a), Dashed: a != ops.ReLU && a != ops.GELU}
		for i := 0; i <= 800; i++ {
			x := -4 + float64(i)/100
			d := a.Deriv(x)
			s.X, s.Y = append(s.X, x), append(s.Y, d*d*ops.NormalPDF(x))
		}
		series = append(series, s)
	}
	return r.Plot("integrand", report.PlotSpec{Title: "f'(x)²·φ(x): the integrand of E[f'(X)²]", XLabel: "x", YLabel: "f'(x)²·φ(x)",
		Series: series, VLines: []float64{0}, LegendLeft: true, DPI: c.DPI,
		Caption: fmt.Sprintf("The area under each curve is E[f'(X)²]. Against ReLU (f'² = 1 for x > 0, 0 below), GELU adds area for x < 0 "+
			"and for x > %s (where GELU' > 1; by GELU'(x) + GELU'(−x) = 1 this is minus GELU's minimum) and loses more on 0 < x < %[1]s.",
			report.FormatDigits(-root, 6))})
}

// key is the activation's name in summary keys ("sigmoid_gated" without β).
func key(a ops.Activation) string { return strings.SplitN(a.Name(), ":", 2)[0] }

// label is the activation's name in tables and legends.
func label(a ops.Activation) string {
	if key(a) == "sigmoid_gated" {
		return "x·σ(βx), β=√(8/π)"
	}
	return a.Name()
}

// set records a summary value and keeps it for the claims.
func set(r *report.Report, m measured, k string, v float64) {
	r.Set(k, v)
	m[k] = v
}
