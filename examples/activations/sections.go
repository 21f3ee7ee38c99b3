package main

// The measurements of sections 1–6 of the report (see main.go), each
// filling its part of the page that report.md.tmpl lays out and setting
// its summary values in r.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/report"
)

// shape tabulates each activation's profile and its tails.
func shape(r *report.Report, pg *page) error {
	var props, tails [][]any
	for _, a := range activation.All() {
		p, err := analysis.ProfileOf(a)
		if err != nil {
			return err
		}
		k := a.Key() + "."
		minX, minF := any("none (monotone)"), any(nil)
		if p.HasMin {
			minX, minF = p.MinX, p.MinF
			r.SetAll(k, map[string]float64{"min_x": p.MinX, "min_f": p.MinF})
		}
		infl := make([]string, len(p.Inflections))
		for i, x := range p.Inflections {
			infl[i] = report.Format(x)
		}
		props = append(props, []any{a.Title(), minX, minF, p.D1At0, p.D2At0, strings.Join(infl, ", "), p.Convex.Format(report.Format), p.Mean.Value})
		r.SetAll(k, map[string]float64{"d1_0": p.D1At0, "d2_0": p.D2At0, "E_f": p.Mean.Value})
		r.Set(k+"inflection_points", p.Inflections)
		// f → 0 on the left and f(x) → x on the right; f'/f at −10 is the
		// decay rate of |f| (about |x| for a Gaussian gate, β for x·σ(βx)).
		tail := map[string]float64{"f_m10": a.F(-10), "f_m5": a.F(-5), "gap_p5": 5 - a.F(5), "gap_p10": 10 - a.F(10), "logslope_m10": a.Deriv(-10) / a.F(-10)}
		tails = append(tails, []any{a.Title(), tail["f_m10"], tail["f_m5"], tail["gap_p5"], tail["gap_p10"], tail["logslope_m10"]})
		r.SetAll(k+"tail.", tail)
	}
	pg.Properties = report.TableData{Header: []string{"activation", "min x", "min f", "f'(0)", "f''(0)", "inflection points", "f'' > 0 on", "E[f(X)]"}, Rows: props}
	pg.Tails = report.TableData{Header: []string{"activation", "f(−10)", "f(−5)", "5 − f(5)", "10 − f(10)", "f'/f at −10"}, Rows: tails}
	pg.TanhLogslope, pg.GELULogslope = r.Get("gelu_tanh.tail.logslope_m10"), r.Get("gelu.tail.logslope_m10")
	return nil
}

// curves plots f, f' and f” of every activation on [−4, 4].
func curves(c config, pg *page) {
	for order, name := range []string{"f", "f'", "f''"} {
		var series []report.Series
		for _, a := range activation.All() {
			s := report.FuncSeries(a.Title(), []func(float64) float64{a.F, a.Deriv, a.Deriv2}[order], -4, 4, 800)
			s.Dashed = strings.HasPrefix(a.Name(), "gelu_")
			series = append(series, s)
		}
		pg.Curves = append(pg.Curves, report.PlotSpec{Title: name + "(x)", XLabel: "x", YLabel: name + "(x)",
			Series: series, HLines: []float64{0}, VLines: []float64{0}, Height: 5, DPI: c.DPI})
	}
}

// approximations measures |GELU − approx| for the tanh and sigmoid forms:
// its maximum over [−10, 10], and the statistic the documents quote, the
// maximum over 1000 N(0, 1) samples, redrawn c.Trials times.
func approximations(r *report.Report, c config, pg *page) error {
	var rows [][]any
	var series []report.Series
	for _, a := range []activation.Activation{activation.GELUTanh, activation.GELUSigmoid} {
		x, d, err := analysis.MaxAbsDiff(activation.GELU, a, -10, 10)
		if err != nil {
			return err
		}
		src := rng.New(c.Seed, "sample1000."+a.Name())
		trials := make([][]float64, c.Trials)
		below := 0
		for t := range trials {
			mx := 0.0
			for i := 0; i < 1000; i++ {
				z := src.Normal()
				mx = math.Max(mx, math.Abs(activation.GELU.F(z)-a.F(z)))
			}
			trials[t] = []float64{mx}
			if mx < 2e-4 {
				below++
			}
		}
		frac := float64(below) / float64(c.Trials)
		q, err := report.Quantiles(trials, 0.05, 0.5, 0.95)
		if err != nil {
			return err
		}
		rows = append(rows, []any{a.Title(), d, math.Abs(x), trials[0][0], q[1][0], q[0][0], q[2][0], frac})
		r.SetAll("approx."+a.Name()+".", map[string]float64{"max_abs_diff": d, "max_abs_diff_x": math.Abs(x), "sample1000.first": trials[0][0],
			"sample1000.median": q[1][0], "sample1000.p05": q[0][0], "sample1000.p95": q[2][0], "sample1000.frac_below_2e-4": frac})
		series = append(series, report.FuncSeries("|GELU − "+a.Title()+"|", func(t float64) float64 { return math.Abs(activation.GELU.F(t) - a.F(t)) }, -6, 6, 1200))
	}
	pg.Approximations = report.TableData{Header: []string{"approximation", "max |GELU − approx|", "at |x|", "1000-sample max: first", "median",
		"5%", "95%", "fraction of draws < 0.0002"}, Rows: rows}
	pg.ApproxError = report.PlotSpec{Title: "|GELU(x) − approximation(x)|", XLabel: "x", YLabel: "absolute error",
		Series: series, LogY: true, DPI: c.DPI}
	return nil
}

// gradientStats: E[f'(X)], E[f'(X)²] and Var[f'(X)], X ~ N(0, 1), by
// quadrature and by Monte Carlo, and the z-score of their difference.
func gradientStats(r *report.Report, c config, res *results, pg *page) error {
	var rows [][]any
	maxZ, worst := 0.0, ""
	for _, a := range activation.All() {
		p, err := analysis.ProfileOf(a)
		if err != nil {
			return err
		}
		mc, err := analysis.DerivMomentsMC(a, c.MC, rng.New(c.Seed, "mc."+a.Name()))
		if err != nil {
			return err
		}
		for i, what := range []string{"E[f'(X)]", "E[f'(X)²]", "Var[f'(X)]"} {
			qv := []analysis.Estimate{p.Deriv.Mean, p.Deriv.MeanSq, p.Deriv.Var}[i]
			mv := []analysis.Estimate{mc.Mean, mc.MeanSq, mc.Var}[i]
			res.Quantities = append(res.Quantities, quantity{a.Key(), what, qv, mv})
			z := analysis.ZDiff(qv, mv)
			if math.Abs(z) > maxZ {
				maxZ, worst = math.Abs(z), a.Title()+" "+what
			}
			rows = append(rows, []any{a.Title(), what, report.FormatPM(qv.Value, qv.Err), report.FormatPM(mv.Value, mv.Err), z})
			r.SetAll(a.Key()+"."+[]string{"E_d1", "E_d1sq", "Var_d1"}[i]+".",
				map[string]float64{"quad": qv.Value, "quad_err": qv.Err, "mc": mv.Value, "mc_se": mv.Err, "z": z})
		}
	}
	// If every error bar is right, the largest of n independent |z| is at
	// least maxZ with probability 1 − (1 − P(|Z| ≥ maxZ))ⁿ.
	p := 1 - math.Pow(1-math.Erfc(maxZ/math.Sqrt2), float64(len(rows)))
	r.SetAll("expectations.", map[string]float64{"max_abs_z": maxZ, "max_abs_z_pvalue": p})
	pg.MaxZ, pg.Worst, pg.NZ, pg.PValue = maxZ, worst, len(rows), p
	pg.Expectations = report.TableData{Header: []string{"activation", "quantity", "quadrature", "Monte Carlo", "z"}, Rows: rows}
	return nil
}

// reluNoise checks E[ReLU(x + ε)] = xΦ(x/σ) + σφ(x/σ), ε ~ N(0, σ²), by
// Monte Carlo.
func reluNoise(r *report.Report, c config, res *results, pg *page) error {
	var rows [][]any
	maxZ := 0.0
	for _, sigma := range []float64{0.5, 1, 2} {
		for _, x := range []float64{-1, -0.5, 0, 1, 3} { // x/σ ≥ −2: enough samples land above 0
			closed := x*activation.NormalCDF(x/sigma) + sigma*activation.NormalPDF(x/sigma)
			mc, err := analysis.NormalExpectationMC(func(z float64) float64 { return activation.ReLU.F(x + sigma*z) }, c.MC,
				rng.New(c.Seed, fmt.Sprintf("noise.%g.%g", x, sigma)))
			if err != nil {
				return err
			}
			res.Noise = append(res.Noise, quantity{"relu", fmt.Sprintf("x=%g σ=%g", x, sigma), analysis.Estimate{Value: closed}, mc})
			rows = append(rows, []any{x, sigma, closed, report.FormatPM(mc.Value, mc.Err), mc.Z(closed)})
			maxZ = math.Max(maxZ, math.Abs(mc.Z(closed)))
		}
	}
	pg.ReluNoise = report.TableData{Header: []string{"x", "σ", "xΦ(x/σ) + σφ(x/σ)", "Monte Carlo E[ReLU(x+ε)]", "z"}, Rows: rows}
	return r.Set("relu_noise.max_abs_z", maxZ)
}
