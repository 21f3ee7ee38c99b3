package main

// The measurements of sections 1–6 of the report (see main.go), each
// adding its tables, plots and summary values to r.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// set records a summary value and keeps it for the claims.
func set(r *report.Report, m measured, key string, v float64) {
	r.Set(key, v)
	m[key] = v
}

// shape: minimum, slope and curvature at 0, inflection points, convexity,
// E[f(X)], and the tails.
func shape(r *report.Report, m measured) error {
	var props, tails [][]any
	for _, a := range ops.All() {
		k := key(a)
		x0, f0, ok, err := a.Minimum()
		if err != nil {
			return err
		}
		infl, convex, err := curvature(a)
		if err != nil {
			return err
		}
		ef, err := ops.NormalExpectation(a.F, a.Breakpoints()...)
		if err != nil {
			return err
		}
		minX, minF := any("none (monotone)"), any(nil)
		if ok {
			minX, minF = x0, f0
			set(r, m, k+".min_x", x0)
			set(r, m, k+".min_f", f0)
		}
		props = append(props, []any{label(a), minX, minF, a.Deriv(0), a.Deriv2(0), fmtAll(infl), convex, ef.Value})
		set(r, m, k+".d1_0", a.Deriv(0))
		set(r, m, k+".d2_0", a.Deriv2(0))
		set(r, m, k+".E_f", ef.Value)
		r.Set(k+".inflection_points", infl)
		m[k+".n_inflection"] = float64(len(infl))
		if len(infl) > 0 {
			m[k+".inflection_max"] = infl[len(infl)-1]
		}
		// f → 0 on the left and f(x) → x on the right; f'/f at −10 is the
		// decay rate of |f| (about |x| for a Gaussian gate, β for x·σ(βx)).
		row := []any{label(a), a.F(-10), a.F(-5), 5 - a.F(5), 10 - a.F(10), a.Deriv(-10) / a.F(-10)}
		tails = append(tails, row)
		for i, name := range []string{"f_m10", "f_m5", "gap_p5", "gap_p10", "logslope_m10"} {
			set(r, m, k+".tail."+name, row[i+1].(float64))
		}
	}
	r.Section("Shape")
	r.Table("properties", []string{"activation", "min x", "min f", "f'(0)", "f''(0)", "inflection points", "f'' > 0 on", "E[f(X)]"}, props)
	r.Section("Tails")
	r.Text(fmt.Sprintf("The tanh form of GELU decays faster than GELU in the left tail (f'/f at −10: %s against %s), so its "+
		"relative error there is large even though its absolute error is tiny.", report.Format(m["gelu_tanh.tail.logslope_m10"]),
		report.Format(m["gelu.tail.logslope_m10"])))
	r.Text("For the gated units, ReLU and Softplus, x − f(x) = −f(−x) (their gates satisfy g(−x) = 1 − g(x)), so the left-tail " +
		"columns also give the right tail beyond float64 resolution: 10 − GELU(10) is 0 in float64 because the true gap, " +
		"−GELU(−10), is far below half an ulp of 10. ELU tends to −1, not 0, on the left, and ReLU is exactly 0 there (f'/f undefined).")
	return r.Table("tails", []string{"activation", "f(−10)", "f(−5)", "5 − f(5)", "10 − f(10)", "f'/f at −10"}, tails)
}

// curves plots f, f' and f” of every activation on [−4, 4].
func curves(r *report.Report, c config) error {
	for order, name := range []string{"f", "f'", "f''"} {
		var series []report.Series
		for _, a := range ops.All() {
			f := []func(float64) float64{a.F, a.Deriv, a.Deriv2}[order]
			s := report.Series{Name: label(a), Dashed: strings.HasPrefix(a.Name(), "gelu_")}
			for i := 0; i <= 800; i++ {
				x := -4 + float64(i)/100
				s.X, s.Y = append(s.X, x), append(s.Y, f(x))
			}
			series = append(series, s)
		}
		if err := r.Plot([]string{"f", "d1", "d2"}[order], report.PlotSpec{Title: name + "(x)", XLabel: "x", YLabel: name + "(x)",
			Series: series, HLines: []float64{0}, VLines: []float64{0}, LegendLeft: order == 0, LegendBottom: order == 1,
			Height: 5, DPI: c.DPI}); err != nil {
			return err
		}
	}
	return nil
}

// approximations measures |GELU − approx| for the tanh and sigmoid forms:
// its maximum over [−10, 10], and the statistic the documents quote, the
// maximum over 1000 N(0, 1) samples, redrawn c.Trials times.
func approximations(r *report.Report, c config, m measured) error {
	var rows [][]any
	var series []report.Series
	for _, a := range []ops.Activation{ops.GELUTanh, ops.GELUSigmoid} {
		x, d, err := ops.MaxAbsDiff(ops.GELU, a, -10, 10)
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
				mx = math.Max(mx, math.Abs(ops.GELU.F(z)-a.F(z)))
			}
			trials[t] = []float64{mx}
			if mx < 2e-4 {
				below++
			}
		}
		q, err := report.Quantiles(trials, 0.05, 0.5, 0.95)
		if err != nil {
			return err
		}
		frac := float64(below) / float64(c.Trials)
		rows = append(rows, []any{label(a), d, math.Abs(x), trials[0][0], q[1][0], q[0][0], q[2][0], frac})
		k := "approx." + a.Name()
		for _, kv := range []struct {
			name string
			v    float64
		}{{".max_abs_diff", d}, {".max_abs_diff_x", math.Abs(x)}, {".sample1000.first", trials[0][0]}, {".sample1000.median", q[1][0]},
			{".sample1000.p05", q[0][0]}, {".sample1000.p95", q[2][0]}, {".sample1000.frac_below_2e-4", frac}} {
			set(r, m, k+kv.name, kv.v)
		}
		s := report.Series{Name: "|GELU − " + a.Name() + "|"}
		for i := 0; i <= 1200; i++ {
			t := -6 + float64(i)/100
			s.X, s.Y = append(s.X, t), append(s.Y, math.Abs(ops.GELU.F(t)-a.F(t)))
		}
		series = append(series, s)
	}
	r.Section("GELU approximations")
	r.Text(fmt.Sprintf("The largest |GELU(x) − approx(x)| over [−10, 10] (the error is symmetric in x), and the statistic the documents "+
		"quote: the largest error over 1000 samples x ~ N(0, 1), computed here in float64 (float32 rounding would move it by about 1e-8), "+
		"redrawn %d times; \"first\" is the first draw, what a reader running the snippet once would see.", c.Trials))
	if err := r.Table("approximations", []string{"approximation", "max |GELU − approx|", "at |x|", "1000-sample max: first", "median",
		"5%", "95%", "fraction of draws < 0.0002"}, rows); err != nil {
		return err
	}
	return r.Plot("approx_error", report.PlotSpec{Title: "|GELU(x) − approximation(x)|", XLabel: "x", YLabel: "absolute error",
		Series: series, LogY: true, LegendBottom: true, DPI: c.DPI,
		Caption: "Log scale. Both errors vanish at x = 0 and where the curves cross, so those points cannot be drawn."})
}

// gradientStats: E[f'(X)], E[f'(X)²] and Var[f'(X)], X ~ N(0, 1), by
// quadrature and by Monte Carlo, and the z-score of their difference.
func gradientStats(r *report.Report, c config, m measured, res *results) error {
	type quadFn = func(func(float64) float64, ...float64) (ops.Estimate, error)
	type mcFn = func(func(float64) float64, int, ops.NormalSource) (ops.Estimate, error)
	var rows [][]any
	maxZ, worst := 0.0, ""
	for _, a := range ops.All() {
		sq := func(x float64) float64 { d := a.Deriv(x); return d * d }
		for i, q := range []struct {
			what, key string
			f         func(float64) float64
			quad      quadFn
			mc        mcFn
		}{
			{"E[f'(X)]", "E_d1", a.Deriv, ops.NormalExpectation, ops.NormalExpectationMC},
			{"E[f'(X)²]", "E_d1sq", sq, ops.NormalExpectation, ops.NormalExpectationMC},
			{"Var[f'(X)]", "Var_d1", a.Deriv, ops.NormalVariance, ops.NormalVarianceMC},
		} {
			qv, err := q.quad(q.f, a.Breakpoints()...)
			if err != nil {
				return fmt.Errorf("%s %s: %w", a, q.what, err)
			}
			mv, err := q.mc(q.f, c.MC, rng.New(c.Seed, fmt.Sprintf("mc.%s.%d", a.Name(), i)))
			if err != nil {
				return fmt.Errorf("%s %s: %w", a, q.what, err)
			}
			res.Quantities = append(res.Quantities, quantity{key(a), q.what, qv, mv})
			z := ops.ZDiff(qv, mv)
			if math.Abs(z) > maxZ {
				maxZ, worst = math.Abs(z), label(a)+" "+q.what
			}
			rows = append(rows, []any{label(a), q.what, report.FormatPM(qv.Value, qv.Err), report.FormatPM(mv.Value, mv.Err), z})
			k := key(a) + "." + q.key
			set(r, m, k+".quad", qv.Value)
			for _, kv := range []struct {
				name string
				v    float64
			}{{".quad_err", qv.Err}, {".mc", mv.Value}, {".mc_se", mv.Err}, {".z", z}} {
				r.Set(k+kv.name, kv.v)
			}
		}
	}
	// If every error bar is right, the largest of n independent |z| is at
	// least maxZ with probability 1 − (1 − P(|Z| ≥ maxZ))ⁿ.
	p := 1 - math.Pow(1-math.Erfc(maxZ/math.Sqrt2), float64(len(rows)))
	set(r, m, "expectations.max_abs_z", maxZ)
	set(r, m, "expectations.max_abs_z_pvalue", p)
	r.Section("Gradient statistics under a unit-Gaussian pre-activation")
	r.Text(fmt.Sprintf("z = (quadrature − Monte Carlo)/√(err² + se²). The largest |z| is %s (%s); if every error bar is right, "+
		"the largest of %d independent |z| is at least that large with probability %s.", report.Format(maxZ), worst, len(rows), report.Format(p)))
	return r.Table("expectations", []string{"activation", "quantity", "quadrature", "Monte Carlo", "z"}, rows)
}

// reluNoise checks E[ReLU(x + ε)] = xΦ(x/σ) + σφ(x/σ), ε ~ N(0, σ²), by
// Monte Carlo.
func reluNoise(r *report.Report, c config, m measured, res *results) error {
	var rows [][]any
	maxZ := 0.0
	for _, sigma := range []float64{0.5, 1, 2} {
		for _, x := range []float64{-1, -0.5, 0, 1, 3} { // x/σ ≥ −2: enough samples land above 0
			closed := x*ops.NormalCDF(x/sigma) + sigma*ops.NormalPDF(x/sigma)
			mc, err := ops.NormalExpectationMC(func(z float64) float64 { return ops.ReLU.F(x + sigma*z) }, c.MC,
				rng.New(c.Seed, fmt.Sprintf("noise.%g.%g", x, sigma)))
			if err != nil {
				return err
			}
			res.Noise = append(res.Noise, quantity{"relu", fmt.Sprintf("x=%g σ=%g", x, sigma), ops.Estimate{Value: closed}, mc})
			rows = append(rows, []any{x, sigma, closed, report.FormatPM(mc.Value, mc.Err), mc.Z(closed)})
			maxZ = math.Max(maxZ, math.Abs(mc.Z(closed)))
		}
	}
	set(r, m, "relu_noise.max_abs_z", maxZ)
	r.Section("ReLU under Gaussian noise")
	return r.Table("relu_noise", []string{"x", "σ", "xΦ(x/σ) + σφ(x/σ)", "Monte Carlo E[ReLU(x+ε)]", "z"}, rows)
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

func fmtAll(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = report.Format(x)
	}
	return strings.Join(s, ", ")
}

// curvature returns the inflection points of a in [−10, 10] (zeros of f”
// where it changes sign, unlike the kinks of ReLU and ELU or where f” ≡ 0)
// and where f” > 0, as a union of intervals.
func curvature(a ops.Activation) (infl []float64, convex string, err error) {
	roots, err := a.Roots(2, -10, 10)
	if err != nil {
		return nil, "", err
	}
	const h = 1e-6
	for _, x := range roots {
		if a.Deriv2(x-h)*a.Deriv2(x+h) < 0 {
			infl = append(infl, x)
		}
	}
	// Between consecutive inflection points and kinks f'' keeps its sign.
	cuts := append(append([]float64{math.Inf(-1)}, infl...), a.Breakpoints()...)
	slices.Sort(cuts)
	cuts = append(slices.Compact(cuts), math.Inf(1))
	var parts []string
	open := math.NaN() // left end of the stretch with f'' > 0 being built
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		mid := (lo + hi) / 2
		switch {
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			mid = 0
		case math.IsInf(lo, -1):
			mid = hi - 1
		case math.IsInf(hi, 1):
			mid = lo + 1
		}
		if pos := a.Deriv2(mid) > 0; pos && math.IsNaN(open) {
			open = lo
		} else if !pos && !math.IsNaN(open) {
			parts, open = append(parts, "("+report.Format(open)+", "+report.Format(lo)+")"), math.NaN()
		}
	}
	if !math.IsNaN(open) {
		parts = append(parts, "("+report.Format(open)+", +Inf)")
	}
	switch {
	case len(parts) == 0:
		return infl, "nowhere", nil
	case parts[0] == "(-Inf, +Inf)":
		return infl, "everywhere", nil
	}
	return infl, strings.Join(parts, " ∪ "), nil
}
