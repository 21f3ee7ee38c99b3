package main

// Running the sweep in parallel and reporting it: dead.csv, the runs
// table, one plot per bias initialization.

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// sweep trains every setting on c.Workers goroutines. Each run has its own
// graph, loaders and optimizer, so the results do not depend on the order
// or the number of workers.
func sweep(c config, d *data) ([]*runResult, error) {
	var settings []setting
	for _, b := range c.Biases {
		for _, lr := range c.LRs {
			for _, a := range c.Acts {
				settings = append(settings, setting{Act: a, LR: lr, Bias: b})
			}
		}
	}
	runs := make([]*runResult, len(settings))
	errs := make([]error, len(settings))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, start := 0, time.Now()
	for w := 0; w < c.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				runs[i], errs[i] = trainOne(c, d, settings[i])
				mu.Lock()
				done++
				if !c.Quiet && errs[i] == nil {
					res := runs[i]
					fmt.Fprintf(os.Stderr, "[%d/%d %.0fs] %-32v dead %5.1f%% → %5.1f%%, test accuracy %s (%.1fs)\n", done, len(settings),
						time.Since(start).Seconds(), settings[i], 100*res.Dead[0], 100*res.Dead[len(res.Dead)-1], accText(res), time.Since(t0).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range settings {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%v: %w", settings[i], err)
		}
	}
	return runs, nil
}

func accText(r *runResult) string {
	if r.Diverged > 0 {
		return fmt.Sprintf("diverged at step %d", r.Diverged)
	}
	return fmt.Sprintf("%.2f%%", 100*r.Accuracy)
}

// sweepReport writes dead.csv, the runs table and the plots, and records
// the summary values.
func sweepReport(r *report.Report, c config, runs []*runResult, m measured) error {
	r.Section("(b) Dead units in an MLP on MNIST")
	r.Text(fmt.Sprintf("MLP 784 → %s → 10 (float32), SGD with heavy-ball momentum %g, batch %d, %d steps per run, PyTorch's default "+
		"weight init (the same initial weights in every run). Biases: `default` is PyTorch's U(±1/√fan_in), a number sets every bias "+
		"to it (the output layer's too, which does not change the softmax). Dead units are counted every %d steps on %d held-out "+
		"training images: dead at tol means |f'(z)| ≤ %g on every one of them, exactly dead means f'(z) = 0 on every one "+
		"(f' evaluated in float64). Accuracy is on the first %s MNIST test images after the last step.",
		strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.Hidden)), " → "), "[]"), c.Momentum, c.Batch, c.Steps, c.ProbeEvery, c.ProbeN, c.Tol, testN(c)))
	var depth []string
	for _, a := range c.Acts {
		depth = append(depth, fmt.Sprintf("%s %s", label(a), report.Format(deadBelow(a, c.Tol))))
	}
	r.Text(fmt.Sprintf("Why a tolerance: ReLU'(z) is exactly 0 for z ≤ 0, but the smooth activations' derivatives only tend to 0 in the "+
		"left tail (GELU' vanishes exactly only at its minimum z = %s, which no set of examples hits, and underflows to 0 in float64 "+
		"only below z ≈ %s; ELU', SiLU' and Softplus' only below about −740), so with tol = 0 a smooth unit counts as dead only "+
		"when its pre-activations have blown up far below zero (the column \"exactly dead\" shows when). |f'(z)| ≤ %g holds for every z below: %s. "+
		"GELU reaches it soonest because its derivative decays like |z|·φ(z), the others like e^z. The column \"median max |f'|\" "+
		"shows how much gradient a typical unit can still pass, dead or not.", report.FormatDigits(rootOf(ops.GELU), 6),
		report.Format(deadBelow(ops.GELU, 0)), c.Tol, strings.Join(depth, ", ")))
	w, err := r.CSV("dead", "activation", "lr", "bias", "step", "train_loss", "dead_fraction", "dead_fraction_exact", "median_max_abs_deriv", "dead_per_layer")
	if err != nil {
		return err
	}
	var rows [][]any
	for _, res := range runs {
		for i, step := range res.Steps {
			var layers []string
			for _, n := range res.Layers[i] {
				layers = append(layers, fmt.Sprint(n))
			}
			if err := w.Write(res.Act.Name(), res.LR, res.Bias, step, res.Loss[i], res.Dead[i], res.DeadExact[i], res.Slope[i], strings.Join(layers, " ")); err != nil {
				return err
			}
		}
		last := len(res.Dead) - 1
		k := runKey(res.setting)
		for name, v := range map[string]float64{"dead_start": res.Dead[0], "dead_end": res.Dead[last], "dead_max": maxOf(res.Dead),
			"dead_exact_end": res.DeadExact[last], "accuracy": res.Accuracy, "diverged_step": float64(res.Diverged),
			"dead_max_z_median": res.DeadMaxZ, "mean_sq_deriv": res.MeanSqD, "median_max_abs_deriv": res.MedianMaxD,
			"ever_dead": float64(res.EverDead), "revived": float64(res.Revived)} {
			set(r, m, k+"."+name, v)
		}
		div := any("no")
		if res.Diverged > 0 {
			div = res.Diverged
		}
		rows = append(rows, []any{label(res.Act), res.LR, res.Bias, res.Dead[0], maxOf(res.Dead), res.Dead[last], res.DeadExact[last],
			res.EverDead, res.Revived, res.DeadMaxZ, res.MedianMaxD, res.MeanSqD, res.Accuracy, div})
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := r.Table("runs", []string{"activation", "lr", "bias", "dead at start", "dead max", "dead at end", "exactly dead at end",
		"units ever dead", "of them alive at end",
		"median max z of dead units", "median max |f'| at end", "E[f'(z)²] at end", "test accuracy", "diverged at step"}, rows); err != nil {
		return err
	}
	if err := bestAccuracy(r, c, runs); err != nil {
		return err
	}
	for _, b := range c.Biases {
		for _, lr := range c.LRs {
			var dead, slope []report.Series
			for _, res := range runs {
				if res.Bias != b || res.LR != lr {
					continue
				}
				d, s := report.Series{Name: label(res.Act)}, report.Series{Name: label(res.Act)}
				for i, step := range res.Steps {
					d.X, d.Y = append(d.X, float64(step)), append(d.Y, res.Dead[i])
					s.X, s.Y = append(s.X, float64(step)), append(s.Y, res.Slope[i])
				}
				dead, slope = append(dead, d), append(slope, s)
			}
			name := fmt.Sprintf("lr%g_bias%s", lr, b)
			if err := r.Plot("dead_"+name, report.PlotSpec{
				Title:  fmt.Sprintf("Dead hidden units, lr %g, bias init %s", lr, b),
				XLabel: "step", YLabel: fmt.Sprintf("fraction with |f'| ≤ %g on all", c.Tol), Series: dead, HLines: []float64{0, 1},
				Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true,
				Caption: "A line that ends early is a run that diverged (NaN or ±Inf) there; see the runs table."}); err != nil {
				return err
			}
			// A run whose median unit never passes any gradient has nothing
			// to show on a log axis: name it in the caption instead.
			var shown []report.Series
			var zero []string
			for _, s := range slope {
				if anyPositive([]report.Series{s}) {
					shown = append(shown, s)
				} else {
					zero = append(zero, s.Name)
				}
			}
			if len(shown) == 0 {
				r.Text(fmt.Sprintf("lr %g, bias init %s: the median unit passes no gradient at any probe in any run (max |f'| = 0), "+
					"so there is no log-scale plot of it.", lr, b))
				continue
			}
			note := ""
			if len(zero) > 0 {
				note = fmt.Sprintf(" Not shown, because the value is 0 at every probe (more than half the units exactly dead): %s.", strings.Join(zero, ", "))
			}
			if err := r.Plot("slope_"+name, report.PlotSpec{
				Title:  fmt.Sprintf("Gradient a typical unit can pass, lr %g, bias init %s", lr, b),
				XLabel: "step", YLabel: "median over units of max |f'|", Series: shown, LogY: true, HLines: []float64{c.Tol},
				Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true,
				Caption: fmt.Sprintf("For every unit the largest |f'(z)| over the probe images, then the median over units; the grey line is "+
					"the tolerance %g. Where it is 0 (more than half the units exactly dead) the log axis cannot show it.%s", c.Tol, note)}); err != nil {
				return err
			}
		}
	}
	return nil
}

func anyPositive(ss []report.Series) bool {
	for _, s := range ss {
		for _, y := range s.Y {
			if y > 0 {
				return true
			}
		}
	}
	return false
}

// bestAccuracy tabulates, per activation and bias init, the best test
// accuracy over the learning rates.
func bestAccuracy(r *report.Report, c config, runs []*runResult) error {
	header := []string{"activation"}
	for _, b := range c.Biases {
		header = append(header, "bias "+b)
	}
	var rows [][]any
	for _, a := range c.Acts {
		row := []any{label(a)}
		for _, b := range c.Biases {
			best, at := math.NaN(), 0.0
			for _, res := range runs {
				if res.Act == a && res.Bias == b && (math.IsNaN(best) || res.Accuracy > best) {
					best, at = res.Accuracy, res.LR
				}
			}
			row = append(row, fmt.Sprintf("%s (lr %g)", report.Format(best), at))
		}
		rows = append(rows, row)
	}
	r.Text("Best test accuracy over the learning rates, per activation and bias init (a diverged run counts as NaN):")
	return r.Table("best_accuracy", header, rows)
}

// deadBelow returns the z below which |a'(z)| ≤ tol everywhere, to 0.001:
// the grid point before the first z, scanning up from −60, where |a'(z)|
// exceeds tol.
func deadBelow(a ops.Activation, tol float64) float64 {
	for i := 1; i <= 61000; i++ {
		if z := float64(i-60000) / 1000; math.Abs(a.Deriv(z)) > tol {
			return z - 0.001
		}
	}
	return math.NaN()
}

func testN(c config) string {
	if c.TestN == 0 {
		return "10000"
	}
	return fmt.Sprint(c.TestN)
}

// runKey names a run in summary keys: "run.gelu.lr_0.1.bias_-3".
func runKey(s setting) string {
	return fmt.Sprintf("run.%s.lr_%g.bias_%s", key(s.Act), s.LR, s.Bias)
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// set records a summary value and keeps it for the claims.
func set(r *report.Report, m measured, k string, v float64) {
	r.Set(k, v)
	m[k] = v
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

func fmtList(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = report.Format(x)
	}
	return strings.Join(s, ", ")
}
