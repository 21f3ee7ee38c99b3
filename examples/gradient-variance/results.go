package main

// Loading MNIST, measuring every activation in parallel, and reporting the
// momentum and gradient-variance measurements.

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

type data struct{ train, test *datasets.Dataset }

// mnist memoizes datasets.MNIST per directory (the tests call run several
// times); the datasets are only read.
var mnist = struct {
	sync.Mutex
	train, test map[string]*datasets.Dataset
}{train: map[string]*datasets.Dataset{}, test: map[string]*datasets.Dataset{}}

func loadData(c config) (*data, error) {
	mnist.Lock()
	defer mnist.Unlock()
	if mnist.train[c.MNIST] == nil {
		tr, te, err := datasets.MNIST(c.MNIST)
		if err != nil {
			return nil, err
		}
		mnist.train[c.MNIST], mnist.test[c.MNIST] = tr, te
	}
	d := &data{train: mnist.train[c.MNIST], test: mnist.test[c.MNIST]}
	var err error
	if c.TrainN > 0 && c.TrainN < d.train.Len() {
		if d.train, err = d.train.Subset(seq(c.TrainN)); err != nil {
			return nil, err
		}
	}
	if c.TestN > 0 && c.TestN < d.test.Len() {
		d.test, err = d.test.Subset(seq(c.TestN))
	}
	return d, err
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// combos are the momentum buffers every phase watches.
var combos = []combo{{probe.EMA, 0.9}, {probe.HeavyBall, 0.9}, {probe.EMA, 0.99}, {probe.HeavyBall, 0.99}}

// measureAll measures every activation on c.Workers goroutines; each has
// its own graph and streams, so the results do not depend on scheduling.
func measureAll(c config, d *data) ([]*actResult, error) {
	out := make([]*actResult, len(c.Acts))
	errs := make([]error, len(c.Acts))
	sem := make(chan struct{}, c.Workers)
	var wg sync.WaitGroup
	start := time.Now()
	for i, a := range c.Acts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = measureAct(c, d, a, combos)
			if !c.Quiet && errs[i] == nil {
				fmt.Fprintf(os.Stderr, "%-10s done after %.0fs: test accuracy %.2f%%\n", a, time.Since(start).Seconds(), 100*out[i].Accuracy)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Acts[i], err)
		}
	}
	return out, nil
}

func comboKey(cb combo) string { return fmt.Sprintf("%s.b%g", cb.Form, cb.Beta) }

func momentumReport(r *report.Report, c config, acts []*actResult, m measured) error {
	burn := 0
	for _, cb := range combos {
		burn = max(burn, probe.BurnIn(cb.Beta, c.BurnEps))
	}
	r.Section("2. Momentum-buffer variance against the stationary predictions")
	r.Text(fmt.Sprintf("Four buffers watch the same gradients: EMA m ← βm + (1−β)g (optim.SGD with dampening β) and heavy ball "+
		"m ← βm + g (dampening 0, PyTorch's default), β = 0.9 and 0.99. They are `probe.Shadow`s: optim.SGD with learning rate 0 on "+
		"private copies of the parameters, so they never move the model. For gradients that are independent with per-element mean μ and "+
		"variance σ², the stationary buffer has E[m] = μ and Var(m) = (1−β)/(1+β)·σ² (EMA), E[m] = μ/(1−β) and Var(m) = σ²/(1−β²) (heavy ball). "+
		"The documents write Var(m) = (1−β)/(1+β)·E[g²]: the EMA factor, applied to the second moment instead of the variance.\n\n"+
		"Each buffer's first %d steps are skipped (β^t ≤ %g for β = 0.99, so the start is forgotten), then %d steps are measured in %d blocks. "+
		"Sums run over all %s parameters: Var(g) is Σ_j Var(g_j), likewise Var(m) and mean(g)². A buffer is strongly autocorrelated "+
		"(lag-1 correlation β), so the sample variance over a window of n steps is expected to be the stationary value times "+
		"`probe.WindowFactor(β, n)` (%s for β = 0.99, n = %d); the table gives both. ± is the batch-means standard error over the blocks.\n\n"+
		"Two settings: **frozen** keeps the trained weights fixed and draws every batch independently with replacement, so the gradients "+
		"are exactly i.i.d. and the formulas must hold; **window_lr…** continues training after %d steps at learning rate %g, at the "+
		"learning rates %s one after the other (burn-in + %d steps each), where the weights move and consecutive gradients need not be "+
		"independent (their measured lag-1 autocorrelation is in the table). The frozen phase uses the weights after the last window.",
		burn, c.BurnEps, c.Window, c.Blocks, fmt.Sprint(paramCount(acts)), report.Format(probe.WindowFactor(0.99, c.Window)), c.Window,
		c.TrainSteps, c.LR, fmtFloats(c.WindowLRs), c.Window))
	var rows [][]any
	for _, a := range acts {
		for _, p := range a.Phases {
			for k, cmp := range p.Comps {
				z := (cmp.Ratio - cmp.Expected) / cmp.RatioSE
				rows = append(rows, []any{label(a.Act), p.Name, cmp.Beta, cmp.Form.String(), cmp.GradVar, cmp.GradMeanSq,
					report.FormatPM(cmp.Ratio, cmp.RatioSE), cmp.Predicted, cmp.Expected, z, cmp.SecondMomentRatio,
					cmp.MeanSlope, probe.MeanFactor(cmp.Form, cmp.Beta), cmp.GradLag1, cmp.BufLag1})
				kk := fmt.Sprintf("momentum.%s.%s.%s.", key(a.Act), p.Name, comboKey(combos[k]))
				for name, v := range map[string]float64{"ratio": cmp.Ratio, "ratio_se": cmp.RatioSE, "predicted": cmp.Predicted,
					"expected": cmp.Expected, "z": z, "doc_ratio": cmp.SecondMomentRatio, "mean_slope": cmp.MeanSlope,
					"grad_lag1": cmp.GradLag1, "buf_lag1": cmp.BufLag1, "grad_var": cmp.GradVar, "grad_mean_sq": cmp.GradMeanSq} {
					set(r, m, kk+name, v)
				}
			}
		}
	}
	if err := r.Table("momentum", []string{"activation", "phase", "β", "form", "Σ Var(g)", "Σ mean(g)²", "Var(m)/Var(g) measured",
		"stationary prediction", "expected in window", "z", "Var(m) / documents' formula", "E[m] slope on E[g]", "predicted slope",
		"lag-1 corr. of g", "lag-1 corr. of m"}, rows); err != nil {
		return err
	}
	r.Text(momentumSummary(c, acts))
	for _, a := range acts {
		var series []report.Series
		for _, p := range a.Phases {
			for k, cb := range combos {
				if len(p.Comps) == 0 || cb.Form != probe.EMA {
					continue
				}
				s := report.Series{Name: fmt.Sprintf("%s β=%g", p.Name, cb.Beta), Dashed: p.Name != "frozen"}
				for b, y := range p.Blocks[k] {
					s.X, s.Y = append(s.X, (float64(b)+0.5)*float64(c.Window/c.Blocks)), append(s.Y, y)
				}
				series = append(series, s)
			}
		}
		if err := r.Plot("momentum_"+key(a.Act), report.PlotSpec{
			Title:  fmt.Sprintf("%s: measured Var(m)/Var(g) ÷ stationary prediction, per block", label(a.Act)),
			XLabel: "step after burn-in (block centre)", YLabel: "measured / predicted", Series: series,
			HLines: []float64{1, probe.WindowFactor(0.99, c.Window)}, Width: 6.5, Height: 4.5, DPI: c.DPI, LegendBottom: true,
			Caption: fmt.Sprintf("EMA buffers; heavy ball gives the same curves (after burn-in its buffer is the EMA buffer divided by 1 − β). "+
				"Solid: frozen weights, i.i.d. batches; dashed: the training windows. Grey lines at 1 and at %s, the value expected for "+
				"β = 0.99 over a window of %d steps (β = 0.9: %s). The documents' formula is off by the factors in the table "+
				"(up to ×10⁴ for heavy ball), beyond this scale.", report.Format(probe.WindowFactor(0.99, c.Window)), c.Window,
				report.Format(probe.WindowFactor(0.9, c.Window)))}); err != nil {
			return err
		}
	}
	return nil
}

func fmtFloats(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// momentumSummary says in numbers where the formulas held: the largest
// |z| at frozen weights, and measured/expected in each window per β.
func momentumSummary(c config, acts []*actResult) string {
	frozenZ := 0.0
	type key struct {
		lr, beta float64
	}
	window := map[key][2]float64{} // min, max over activations of measured/expected (EMA)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, a := range acts {
		for _, p := range a.Phases {
			for _, cmp := range p.Comps {
				if p.Name == "frozen" {
					frozenZ = math.Max(frozenZ, math.Abs((cmp.Ratio-cmp.Expected)/cmp.RatioSE))
					continue
				}
				for _, lr := range c.WindowLRs {
					if p.Name != windowName(lr) || cmp.Form != probe.EMA {
						continue
					}
					q, k := cmp.Ratio/cmp.Expected, key{lr, cmp.Beta}
					mm, ok := window[k]
					if !ok {
						mm = [2]float64{q, q}
					}
					window[k] = [2]float64{math.Min(mm[0], q), math.Max(mm[1], q)}
					lo, hi = math.Min(lo, cmp.GradLag1), math.Max(hi, cmp.GradLag1)
				}
			}
		}
	}
	var parts []string
	var deficit []float64 // 1 − measured/expected for β = 0.99, per window, in c.WindowLRs order
	for _, lr := range c.WindowLRs {
		var ps []string
		for _, beta := range []float64{0.9, 0.99} {
			if mm, ok := window[key{lr, beta}]; ok {
				ps = append(ps, fmt.Sprintf("β = %g: %s", beta, rangeText(mm)))
				if beta == 0.99 {
					deficit = append(deficit, 1-mm[1])
				}
			}
		}
		parts = append(parts, fmt.Sprintf("learning rate %g: %s", lr, strings.Join(ps, ", ")))
	}
	verdict := "with i.i.d. gradients the measurements agree with the stationary formula of each form within sampling error"
	if frozenZ > 4 {
		verdict = "more than sampling error explains; a longer burn-in or window may be needed"
	}
	text := fmt.Sprintf("At frozen weights the largest |z| over all activations and buffers is %s: %s. In the training windows "+
		"measured/expected (over the activations) is %s; the gradients' lag-1 autocorrelation there is %s to %s. ",
		report.FormatDigits(frozenZ, 2), verdict, strings.Join(parts, "; "), report.Format(lo), report.Format(hi))
	if len(deficit) > 0 && deficit[0] > 0.1 {
		text += "The β = 0.99 buffers vary less than independent gradients would make them. Lag-1 correlations this small cannot explain " +
			"it, but a β = 0.99 buffer averages over about 100 steps and also feels correlations at longer lags: with the weights moving, each " +
			"noisy step changes the gradients that follow, and where later gradients partly undo what the noise did, the correlations summed " +
			"over those lags are negative. At frozen weights there is no such feedback"
		shrinks := len(deficit) > 1
		for i := 1; i < len(deficit); i++ {
			shrinks = shrinks && c.WindowLRs[i] < c.WindowLRs[i-1] && deficit[i] < deficit[i-1]
		}
		if shrinks {
			text += ", and the deficit shrinks as the learning rate does, as that explanation predicts. "
		} else {
			text += "; this run does not show the deficit shrinking with the learning rate, so the explanation is not confirmed here. "
		}
	}
	return text + "EMA and heavy ball give the same ratios: once the start is forgotten, the heavy-ball buffer is the EMA buffer divided by 1 − β."
}

func rangeText(mm [2]float64) string {
	if report.Format(mm[0]) == report.Format(mm[1]) {
		return report.Format(mm[0])
	}
	return report.Format(mm[0]) + "–" + report.Format(mm[1])
}

func paramCount(acts []*actResult) int {
	if len(acts) == 0 || len(acts[0].Phases) == 0 {
		return 0
	}
	g := acts[0].Phases[0].Grad
	return g[len(g)-1].Elements
}

func gradientReport(r *report.Report, c config, acts []*actResult, m measured) error {
	r.Section("3. Gradient variance by activation")
	r.Text(fmt.Sprintf("Σ_j Var(g_j) over the elements of each parameter tensor, per phase. All activations start from the same weights "+
		"(same seed and parameter names) and see the same batches in every phase, so at **init** the only difference is the activation. "+
		"Ratios are to %s's value in the same phase and tensor. The network's E[f'(z)] and E[f'(z)²] average over all hidden units and the "+
		"first %d batches of the phase: the counterparts of the N(0, 1) values of section 1 for the pre-activations the network actually has.",
		label(acts[0].Act), c.UnitBatches))
	var rows, drows [][]any
	for _, a := range acts {
		for pi, p := range a.Phases {
			for ti, t := range p.Grad {
				name := "all"
				if ti < len(a.Tensors) {
					name = a.Tensors[ti]
				}
				ref := acts[0].Phases[pi].Grad[ti].Var
				rows = append(rows, []any{label(a.Act), p.Name, name, t.Var, t.MeanSq, t.Var / t.MeanSq, t.Var / ref})
				kk := fmt.Sprintf("grad.%s.%s.%s.", key(a.Act), p.Name, name)
				set(r, m, kk+"var", t.Var)
				set(r, m, kk+"mean_sq", t.MeanSq)
			}
			drows = append(drows, []any{label(a.Act), p.Name, p.MeanD, p.MeanSqD, m["normal."+key(a.Act)+".E_d1sq"]})
			set(r, m, fmt.Sprintf("net.%s.%s.E_d1", key(a.Act), p.Name), p.MeanD)
			set(r, m, fmt.Sprintf("net.%s.%s.E_d1sq", key(a.Act), p.Name), p.MeanSqD)
		}
		set(r, m, "accuracy."+key(a.Act), a.Accuracy)
		r.Set("train."+key(a.Act)+".var", a.TrainVar)
		r.Set("train."+key(a.Act)+".loss", a.TrainLoss)
	}
	if err := r.Table("gradient_variance", []string{"activation", "phase", "tensor", "Σ Var(g)", "Σ mean(g)²", "Var / mean²",
		"Σ Var(g) / " + label(acts[0].Act) + "'s"}, rows); err != nil {
		return err
	}
	if err := r.Table("network_derivative", []string{"activation", "phase", "E[f'(z)] in the network", "E[f'(z)²] in the network",
		"E[f'(X)²], X ~ N(0,1)"}, drows); err != nil {
		return err
	}
	var acc []string
	for _, a := range acts {
		acc = append(acc, fmt.Sprintf("%s %s", label(a.Act), report.Format(a.Accuracy)))
	}
	r.Text(fmt.Sprintf("Test accuracy after the last window (%s test images): %s.", testN(c), strings.Join(acc, ", ")))
	var series []report.Series
	for _, a := range acts {
		s := report.Series{Name: label(a.Act)}
		for i, st := range a.TrainStep {
			s.X, s.Y = append(s.X, float64(st)), append(s.Y, a.TrainVar[i])
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	if len(series) == 0 {
		return nil
	}
	return r.Plot("train_variance", report.PlotSpec{Title: "Gradient variance during training", XLabel: "step",
		YLabel: fmt.Sprintf("Σ_j Var(g_j) over %d steps", c.VarBlock), Series: series, LogY: true, DPI: c.DPI,
		Caption: fmt.Sprintf("Each point: the per-parameter variance of the gradient over the %d steps ending there (learning rate %g, "+
			"momentum %g), summed over all parameters.", c.VarBlock, c.LR, c.Momentum)})
}

func testN(c config) string {
	if c.TestN == 0 {
		return "10000"
	}
	return fmt.Sprint(c.TestN)
}
