package main

// Reporting part (b): dead.csv, the runs table, the best accuracies, one
// pair of plots per (learning rate, bias init), and the summary keys.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

func sweepReport(r *report.Report, c config, runs []*runResult) error {
	r.Section("(b) Dead units in an MLP on MNIST")
	testN := "the first 10000" // all of them
	if c.TestN > 0 {
		testN = fmt.Sprintf("a seeded subset of %d", c.TestN)
	}
	r.Text(fmt.Sprintf("MLP 784 → %s → 10 (float32), SGD with heavy-ball momentum %g, batch %d, %d steps per run, PyTorch's default "+
		"weight init (the same initial weights in every run). Biases: `default` is PyTorch's U(±1/√fan_in), a number sets every bias "+
		"to it (the output layer's too, which does not change the softmax). Dead units are counted every %d steps on %d held-out "+
		"training images: dead at tol means |f'(z)| ≤ %g on every one of them, exactly dead means f'(z) = 0 on every one "+
		"(f' evaluated in float64). Accuracy is on %s MNIST test images after the last step.",
		strings.ReplaceAll(c.Hidden.String(), ",", " → "), c.Momentum, c.Batch, c.Steps, c.ProbeEvery, c.ProbeN, c.Tol, testN))
	var depth []string
	for _, a := range c.Acts {
		depth = append(depth, fmt.Sprintf("%s %s", a.Title(), report.Format(deadBelow(a, c.Tol))))
	}
	r.Text(fmt.Sprintf("Why a tolerance: ReLU'(z) is exactly 0 for z ≤ 0, but the smooth activations' derivatives only tend to 0 in the "+
		"left tail (GELU' vanishes exactly only at its minimum z = %s, which no set of examples hits, and underflows to 0 in float64 "+
		"only below z ≈ %s; ELU', SiLU' and Softplus' only below about −740), so with tol = 0 a smooth unit counts as dead only "+
		"when its pre-activations have blown up far below zero (the column \"exactly dead\" shows when). |f'(z)| ≤ %g holds for every z below: %s. "+
		"GELU reaches it soonest because its derivative decays like |z|·φ(z), the others like e^z. The column \"median max |f'|\" "+
		"shows how much gradient a typical unit can still pass, dead or not.", report.FormatDigits(rootOf(activation.GELU), 6),
		report.Format(deadBelow(activation.GELU, 0)), c.Tol, strings.Join(depth, ", ")))
	if err := experiment.WriteCurves(r, "dead", runs, []string{"activation", "lr", "bias", "step"}, func(run *runResult, step int) []any {
		return []any{run.Setting.Act.Name(), run.Setting.LR, run.Setting.Bias, step}
	}); err != nil {
		return err
	}
	var rows [][]any
	for _, run := range runs {
		dead, exact := run.Curve.Metric("dead_fraction"), run.Curve.Last("dead_fraction_exact")
		v, div := run.Values, any("no")
		if d := divergedStep(run); d > 0 {
			div = d
		}
		for name, x := range map[string]float64{"dead_start": dead[0], "dead_end": dead[len(dead)-1], "dead_max": slices.Max(dead),
			"dead_exact_end": exact, "accuracy": v[accuracy], "diverged_step": float64(divergedStep(run)), "dead_max_z_median": v[deadMaxZ],
			"mean_sq_deriv": v[meanSqDeriv], "median_max_abs_deriv": run.Curve.Last("median_max_abs_deriv"), "ever_dead": v[everDead], "revived": v[revived]} {
			r.Set("run."+run.Name+"."+name, x)
		}
		rows = append(rows, []any{run.Setting.Act.Title(), run.Setting.LR, run.Setting.Bias, dead[0], slices.Max(dead), dead[len(dead)-1], exact,
			int(v[everDead]), int(v[revived]), v[deadMaxZ], run.Curve.Last("median_max_abs_deriv"), v[meanSqDeriv], v[accuracy], div})
	}
	if err := r.Table("runs", []string{"activation", "lr", "bias", "dead at start", "dead max", "dead at end", "exactly dead at end",
		"units ever dead", "of them alive at end", "median max z of dead units", "median max |f'| at end", "E[f'(z)²] at end",
		"test accuracy", "diverged at step"}, rows); err != nil {
		return err
	}
	header, rows := []string{"activation"}, nil
	for _, b := range c.Biases {
		header = append(header, "bias "+b)
	}
	for _, a := range c.Acts {
		row := []any{a.Title()}
		for _, b := range c.Biases {
			best, at := math.NaN(), 0.0
			for _, run := range runs {
				if acc := run.Values[accuracy]; run.Setting.Act == a && run.Setting.Bias == b && (math.IsNaN(best) || acc > best) {
					best, at = acc, run.Setting.LR
				}
			}
			row = append(row, fmt.Sprintf("%s (lr %g)", report.Format(best), at))
		}
		rows = append(rows, row)
	}
	r.Text("Best test accuracy over the learning rates, per activation and bias init (a diverged run counts as NaN):")
	if err := r.Table("best_accuracy", header, rows); err != nil {
		return err
	}
	for _, b := range c.Biases {
		for _, lr := range c.LRs {
			if err := plots(r, c, runs, lr, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// divergedStep is the step whose loss, gradient or weight was NaN or
// ±Inf (0: none).
func divergedStep(run *runResult) int {
	if run.Diverged == "" {
		return 0
	}
	return run.Steps + 1
}

// plots draws the dead fraction and the median max |f'| of every
// activation at one learning rate and bias init.
func plots(r *report.Report, c config, runs []*runResult, lr float64, b string) error {
	var dead, shown []report.Series
	var zero []string
	for _, run := range runs {
		if run.Setting.Bias != b || run.Setting.LR != lr {
			continue
		}
		g := &experiment.Group[setting]{Runs: []*runResult{run}}
		dead = append(dead, g.Band("dead_fraction").Series(run.Setting.Act.Title(), nil))
		// A run whose median unit never passes any gradient has nothing to
		// show on a log axis: name it in the caption instead.
		if s := g.Band("median_max_abs_deriv").Series(run.Setting.Act.Title(), nil); slices.ContainsFunc(s.Y, func(y float64) bool { return y > 0 }) {
			shown = append(shown, s)
		} else {
			zero = append(zero, s.Name)
		}
	}
	name := fmt.Sprintf("lr%g_bias%s", lr, b)
	if err := r.Plot("dead_"+name, report.PlotSpec{Title: fmt.Sprintf("Dead hidden units, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: fmt.Sprintf("fraction with |f'| ≤ %g on all", c.Tol), Series: dead, HLines: []float64{0, 1},
		Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true,
		Caption: "A line that ends early is a run that diverged (NaN or ±Inf) there; see the runs table."}); err != nil {
		return err
	}
	if len(shown) == 0 {
		r.Text(fmt.Sprintf("lr %g, bias init %s: the median unit passes no gradient at any probe in any run (max |f'| = 0), "+
			"so there is no log-scale plot of it.", lr, b))
		return nil
	}
	note := ""
	if len(zero) > 0 {
		note = fmt.Sprintf(" Not shown, because the value is 0 at every probe (more than half the units exactly dead): %s.", strings.Join(zero, ", "))
	}
	return r.Plot("slope_"+name, report.PlotSpec{Title: fmt.Sprintf("Gradient a typical unit can pass, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: "median over units of max |f'|", Series: shown, LogY: true, HLines: []float64{c.Tol},
		Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true,
		Caption: fmt.Sprintf("For every unit the largest |f'(z)| over the probe images, then the median over units; the grey line is "+
			"the tolerance %g. Where it is 0 (more than half the units exactly dead) the log axis cannot show it.%s", c.Tol, note)})
}

// deadBelow returns the z below which |a'(z)| ≤ tol everywhere, to 0.001:
// the grid point before the first z, scanning up from −60, where |a'(z)|
// exceeds tol.
func deadBelow(a activation.Activation, tol float64) float64 {
	for i := 1; i <= 61000; i++ {
		if z := float64(i-60000) / 1000; math.Abs(a.Deriv(z)) > tol {
			return z - 0.001
		}
	}
	return math.NaN()
}

func describe(r *report.Report) {
	for _, d := range [][2]string{
		{"neuron.*.dL_dw", "∂L/∂w of the single neuron at z = −1 computed through the graph (key: neuron.<activation>.<dtype>.dL_dw)"},
		{"neuron.*.dL_dw_analytic", "(a(z) − t)·a'(z)·x at z = −1 from the float64 references"},
		{"neuron.*.dL_db", "∂L/∂b through the graph at z = −1"},
		{"neuron.*.d1_at_m1", "a'(−1)"},
		{"descent.*.z_end", "z after the gradient-descent steps on the single neuron, from the start z0 in the key"},
		{"descent.*.loss_end", "the loss ½(a(z) − t)² there"},
		{"descent.*.d1_end", "a'(z) there"},
		{"run.*.dead_start", "fraction of hidden units dead at tol before training (key: run.<activation>.lr_<lr>.bias_<init>)"},
		{"run.*.dead_end", "fraction dead at tol at the last probe (the last step, or the last probe before a divergence)"},
		{"run.*.dead_max", "largest fraction dead at tol over all probes"},
		{"run.*.dead_exact_end", "fraction with f'(z) = 0 exactly on every probe example at the last probe"},
		{"run.*.accuracy", "test accuracy after the last step (NaN if the run diverged)"},
		{"run.*.diverged_step", "step at which the loss, a gradient or a weight became NaN or ±Inf (0: never)"},
		{"run.*.dead_max_z_median", "median over the units dead at tol at the end of their largest pre-activation on the probe set (NaN: no dead unit)"},
		{"run.*.ever_dead", "number of hidden units dead at tol at one probe or more"},
		{"run.*.revived", "number of those alive at the last probe"},
		{"run.*.median_max_abs_deriv", "median over hidden units of max |f'(z)| on the probe set at the last probe: the largest slope a typical unit offers the gradient"},
		{"run.*.mean_sq_deriv", "mean of f'(z)² over all hidden units and probe examples at the last probe"},
		{"gelu.d1_root", "the zero of GELU' (GELU's minimum), found by activation.Activation.Roots"},
	} {
		r.Describe(d[0], d[1])
	}
}
