package main

// The report's sections: 1. E[f'(X)²] under N(0, 1), 2. momentum-buffer
// variance against the predictions, 3. gradient variance by activation.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

func derivStats(r *report.Report, c config) error {
	var rows [][]any
	var series []report.Series
	var gelu analysis.Profile
	for _, a := range activation.All() {
		p, err := analysis.ProfileOf(a)
		if err != nil {
			return err
		}
		if a == activation.GELU {
			gelu = p
		}
		d := p.Deriv
		r.SetAll("normal."+a.Key()+".", map[string]float64{"E_d1": d.Mean.Value, "E_d1sq": d.MeanSq.Value, "Var_d1": d.Var.Value})
		rows = append(rows, []any{a.Title(), report.FormatPM(d.Mean.Value, d.Mean.Err), report.FormatPM(d.MeanSq.Value, d.MeanSq.Err), report.FormatPM(d.Var.Value, d.Var.Err)})
		s := report.FuncSeries(a.Title(), func(x float64) float64 { return a.Deriv(x) * a.Deriv(x) * activation.NormalPDF(x) }, -4, 4, 800)
		s.Dashed = a != activation.ReLU && a != activation.GELU
		series = append(series, s)
	}
	r.Section("1. The activation's derivative under a unit-Gaussian pre-activation")
	r.Text(fmt.Sprintf("X ~ N(0, 1); adaptive Gauss–Kronrod quadrature (`analysis.NormalExpectation`, `analysis.NormalVariance`) ± its error estimate. "+
		"E[f'(X)²] is the second moment of f'(X), not its variance: Var[f'(X)] = E[f'(X)²] − E[f'(X)]². For GELU, "+
		"GELU'(x) + GELU'(−x) = 1 makes E[GELU'(X)] = ½ exactly, as for ReLU, so GELU is lower than ReLU by the same amount in both: "+
		"%s in E[f'²] and %s in Var[f'].", report.Format(r.Get("normal.relu.E_d1sq")-r.Get("normal.gelu.E_d1sq")),
		report.Format(r.Get("normal.relu.Var_d1")-r.Get("normal.gelu.Var_d1"))))
	if err := r.Table("normal_derivative", []string{"activation", "E[f'(X)]", "E[f'(X)²]", "Var[f'(X)]"}, rows); err != nil {
		return err
	}
	return r.Plot("integrand", report.PlotSpec{Title: "f'(x)²·φ(x): the integrand of E[f'(X)²]", XLabel: "x", YLabel: "f'(x)²·φ(x)",
		Series: series, VLines: []float64{0}, DPI: c.DPI,
		Caption: fmt.Sprintf("The area under each curve is E[f'(X)²]. Against ReLU (f'² = 1 for x > 0, 0 below), GELU adds area for x < 0 "+
			"and for x > %s (where GELU' > 1; by GELU'(x) + GELU'(−x) = 1 this is minus GELU's minimum) and loses more on 0 < x < %[1]s.",
			report.FormatDigits(-gelu.MinX, 6))})
}

func momentumReport(r *report.Report, c config, acts []*actResult) error {
	burn := burnIn(c)
	wf := func(beta float64) string { return report.Format(probe.WindowFactor(beta, c.Window)) }
	r.Section("2. Momentum-buffer variance against the stationary predictions")
	r.Text(fmt.Sprintf("Four buffers watch the same gradients: EMA m ← βm + (1−β)g (optim.SGD with dampening β) and heavy ball "+
		"m ← βm + g (dampening 0, PyTorch's default), β = 0.9 and 0.99. They are `probe.Shadow`s: optim.SGD with learning rate 0 on "+
		"private copies of the parameters, so they never move the model. For gradients that are independent with per-element mean μ and "+
		"variance σ², the stationary buffer has E[m] = μ and Var(m) = (1−β)/(1+β)·σ² (EMA), E[m] = μ/(1−β) and Var(m) = σ²/(1−β²) (heavy ball). "+
		"The documents write Var(m) = (1−β)/(1+β)·E[g²]: the EMA factor, applied to the second moment instead of the variance.\n\n"+
		"Each buffer's first %d steps are skipped (β^t ≤ %g for β = 0.99, so the start is forgotten), then %d steps are measured in %d blocks. "+
		"Sums run over all %d parameters: Var(g) is Σ_j Var(g_j), likewise Var(m) and mean(g)². A buffer is strongly autocorrelated "+
		"(lag-1 correlation β), so the sample variance over a window of n steps is expected to be the stationary value times "+
		"`probe.WindowFactor(β, n)` (%s for β = 0.99, n = %d); the table gives both. ± is the batch-means standard error over the blocks.\n\n"+
		"Two settings: **frozen** keeps the trained weights fixed and draws every batch independently with replacement, so the gradients "+
		"are exactly i.i.d. and the formulas must hold; **window_lr…** continues training after %d steps at learning rate %g, at the "+
		"learning rates %s one after the other (burn-in + %d steps each), where the weights move and consecutive gradients need not be "+
		"independent (their measured lag-1 autocorrelation is in the table). The frozen phase uses the weights after the last window.",
		burn, c.BurnEps, c.Window, c.Blocks, acts[0].Phases[0].All().Elements, wf(0.99), c.Window,
		c.TrainSteps, c.LR, strings.ReplaceAll(strings.Trim(fmt.Sprint(c.WindowLRs), "[]"), " ", ", "), c.Window))
	var rows [][]any
	for _, a := range acts {
		for _, p := range a.Phases {
			for _, cmp := range p.Buffers {
				rows = append(rows, []any{a.Act.Title(), p.Name, cmp.Beta, cmp.Form.String(), cmp.GradVar, cmp.GradMeanSq,
					report.FormatPM(cmp.Ratio, cmp.RatioSE), cmp.Predicted, cmp.Expected, cmp.Z(), cmp.SecondMomentRatio,
					cmp.MeanSlope, probe.MeanFactor(cmp.Form, cmp.Beta), cmp.GradLag1, cmp.BufLag1})
				r.SetAll(fmt.Sprintf("momentum.%s.%s.%s.b%g.", a.Act.Key(), p.Name, cmp.Form, cmp.Beta), map[string]float64{
					"ratio": cmp.Ratio, "ratio_se": cmp.RatioSE, "predicted": cmp.Predicted, "expected": cmp.Expected, "z": cmp.Z(),
					"doc_ratio": cmp.SecondMomentRatio, "mean_slope": cmp.MeanSlope, "grad_lag1": cmp.GradLag1, "buf_lag1": cmp.BufLag1,
					"grad_var": cmp.GradVar, "grad_mean_sq": cmp.GradMeanSq})
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
			for _, cmp := range p.Buffers {
				if cmp.Form != probe.EMA {
					continue
				}
				s := report.Series{Name: fmt.Sprintf("%s β=%g", p.Name, cmp.Beta), Dashed: p.Name != "frozen"}
				for b, y := range cmp.Blocks {
					s.X, s.Y = append(s.X, (float64(b)+0.5)*float64(c.Window/c.Blocks)), append(s.Y, y/cmp.Predicted)
				}
				series = append(series, s)
			}
		}
		if err := r.Plot("momentum_"+a.Act.Key(), report.PlotSpec{
			Title:  fmt.Sprintf("%s: measured Var(m)/Var(g) ÷ stationary prediction, per block", a.Act.Title()),
			XLabel: "step after burn-in (block centre)", YLabel: "measured / predicted", Series: series,
			HLines: []float64{1, probe.WindowFactor(0.99, c.Window)}, Width: 6.5, Height: 4.5, DPI: c.DPI,
			Caption: fmt.Sprintf("EMA buffers; heavy ball gives the same curves (after burn-in its buffer is the EMA buffer divided by 1 − β). "+
				"Solid: frozen weights, i.i.d. batches; dashed: the training windows. Grey lines at 1 and at %s, the value expected for "+
				"β = 0.99 over a window of %d steps (β = 0.9: %s). The documents' formula is off by the factors in the table "+
				"(up to ×10⁴ for heavy ball), beyond this scale.", wf(0.99), c.Window, wf(0.9))}); err != nil {
			return err
		}
	}
	return nil
}

// momentumSummary says in numbers where the formulas held: the largest
// |z| at frozen weights, and measured/expected of the EMA buffers in each
// window per β, over the activations.
func momentumSummary(c config, acts []*actResult) string {
	frozenZ, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	type key struct{ lr, beta float64 }
	window := map[key][2]float64{} // min, max of measured/expected
	for _, a := range acts {
		for i, p := range a.Phases {
			for _, cmp := range p.Buffers {
				if p.Name == "frozen" {
					frozenZ = math.Max(frozenZ, math.Abs(cmp.Z()))
				} else if cmp.Form == probe.EMA {
					q, k := cmp.Ratio/cmp.Expected, key{c.WindowLRs[i-1], cmp.Beta} // phase i is window i−1
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

func gradientReport(r *report.Report, c config, acts []*actResult) error {
	ref := acts[0].Act.Title()
	r.Section("3. Gradient variance by activation")
	r.Text(fmt.Sprintf("Σ_j Var(g_j) over the elements of each parameter tensor, per phase. All activations start from the same weights "+
		"(same seed and parameter names) and see the same batches in every phase, so at **init** the only difference is the activation. "+
		"Ratios are to %s's value in the same phase and tensor. The network's E[f'(z)] and E[f'(z)²] average over all hidden units and the "+
		"first %d batches of the phase: the counterparts of the N(0, 1) values of section 1 for the pre-activations the network actually has.",
		ref, c.UnitBatches))
	var rows, drows [][]any
	var acc []string
	var series []report.Series
	for _, a := range acts {
		k := a.Act.Key()
		for pi, p := range a.Phases {
			for ti, t := range p.Grad {
				name := "all"
				if ti < len(p.Tensors) {
					name = p.Tensors[ti]
				}
				rows = append(rows, []any{a.Act.Title(), p.Name, name, t.Var, t.MeanSq, t.Var / t.MeanSq, t.Var / acts[0].Phases[pi].Grad[ti].Var})
				r.SetAll(fmt.Sprintf("grad.%s.%s.%s.", k, p.Name, name), map[string]float64{"var": t.Var, "mean_sq": t.MeanSq})
			}
			drows = append(drows, []any{a.Act.Title(), p.Name, p.UnitMean, p.UnitMeanSq, r.Get("normal." + k + ".E_d1sq")})
			r.SetAll(fmt.Sprintf("net.%s.%s.", k, p.Name), map[string]float64{"E_d1": p.UnitMean, "E_d1sq": p.UnitMeanSq})
		}
		r.Set("accuracy."+k, a.Accuracy)
		r.Set("train."+k+".var", a.TrainVar)
		r.Set("train."+k+".loss", a.TrainLoss)
		acc = append(acc, fmt.Sprintf("%s %s", a.Act.Title(), report.Format(a.Accuracy)))
		if len(a.TrainStep) > 0 {
			s := report.Series{Name: a.Act.Title(), Y: a.TrainVar}
			for _, st := range a.TrainStep {
				s.X = append(s.X, float64(st))
			}
			series = append(series, s)
		}
	}
	if err := r.Table("gradient_variance", []string{"activation", "phase", "tensor", "Σ Var(g)", "Σ mean(g)²", "Var / mean²",
		"Σ Var(g) / " + ref + "'s"}, rows); err != nil {
		return err
	}
	if err := r.Table("network_derivative", []string{"activation", "phase", "E[f'(z)] in the network", "E[f'(z)²] in the network",
		"E[f'(X)²], X ~ N(0,1)"}, drows); err != nil {
		return err
	}
	testN := 10000
	if c.TestN > 0 {
		testN = min(c.TestN, testN)
	}
	r.Text(fmt.Sprintf("Test accuracy after the last window (%d test images): %s.", testN, strings.Join(acc, ", ")))
	if len(series) == 0 {
		return nil
	}
	return r.Plot("train_variance", report.PlotSpec{Title: "Gradient variance during training", XLabel: "step",
		YLabel: fmt.Sprintf("Σ_j Var(g_j) over %d steps", c.VarBlock), Series: series, LogY: true, DPI: c.DPI,
		Caption: fmt.Sprintf("Each point: the per-parameter variance of the gradient over the %d steps ending there (learning rate %g, "+
			"momentum %g), summed over all parameters.", c.VarBlock, c.LR, c.Momentum)})
}
