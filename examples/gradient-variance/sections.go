package main

// The numbers, tables and plots of the report's sections and its claims
// (report.md.tmpl says what they mean, the claims' words included):
// 1. E[f'(X)²] under N(0, 1), 2. momentum-buffer variance against the
// predictions, 3. gradient variance by activation.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

// page is what report.md.tmpl shows and its claims say.
type page struct {
	config
	R                                 *report.Report // the template reads measurements back with .R.Get
	ReluMinusGELUSq, ReluMinusGELUVar float64        // E[f'²] and Var[f'] of ReLU minus GELU's
	NormalDerivative                  report.TableData
	Integrand                         report.PlotSpec
	OneAt                             float64 // where GELU' = 1: minus GELU's minimum
	Burn, Elements                    int
	WF9, WF99                         float64 // probe.WindowFactor(β, window)
	MomentumTable                     report.TableData
	FrozenZ, LagLo, LagHi             float64
	WindowRanges                      [][]lrRange // per window learning rate, per β: measured/expected over the activations
	Deficit, Shrinks                  bool        // the β = 0.99 buffers vary too little; less so at lower rates
	MomentumPlots                     []namedPlot
	Ref                               string // the activation the gradient variances are divided by
	GradientVariance, NetDerivative   report.TableData
	Results                           []*actResult
	TrainVariance                     []report.PlotSpec // none or one
	// For the claims: the activation the momentum claims quote (GELU if
	// measured), its Σ mean(g)²/Σ Var(g) at frozen trained and at initial
	// weights, heavy ball's Var(m)/Var(g) at β = 0.9 and its ratio to
	// (1−β)/(1+β), GELU's and ReLU's gradient variance per phase.
	Quoted                   *actResult
	Buffers                  []probe.Buffer
	ClosedForm               float64 // E[GELU'(X)²] = 1/3 + 2/(3√3·π)
	MeanSqFrozen, MeanSqInit float64
	HB, HBOverEMA            float64
	PhaseVars                []phaseVar
	Lower                    int // phases where GELU's is lower
	// Diverged are the activations whose measurement a NaN or infinite
	// value stopped, left out of sections 2 and 3 (Results holds the
	// others); NotCompared says why GELU and ReLU were not compared.
	Diverged    []*actResult
	NotCompared string
}

type phaseVar struct {
	Name              string
	GELU, ReLU, Ratio float64
}

// lrRange is min–max of measured/expected of the EMA buffers of one β in
// the window at one learning rate.
type lrRange struct{ LR, Beta, Lo, Hi float64 }

type namedPlot struct {
	Name string
	Spec report.PlotSpec
}

func derivStats(r *report.Report, pg *page) error {
	profiles, table, series, err := probe.NormalDerivs(r, "normal.", activation.All())
	if err != nil {
		return err
	}
	for i, p := range profiles {
		if p.Activation == activation.GELU {
			pg.OneAt = -p.MinX
		}
		series[i].Dashed = p.Activation != activation.ReLU && p.Activation != activation.GELU
	}
	pg.ReluMinusGELUSq = r.Get("normal.relu.E_d1sq") - r.Get("normal.gelu.E_d1sq")
	pg.ReluMinusGELUVar = r.Get("normal.relu.Var_d1") - r.Get("normal.gelu.Var_d1")
	pg.NormalDerivative = table
	pg.Integrand = report.PlotSpec{Title: "f'(x)²·φ(x): the integrand of E[f'(X)²]", XLabel: "x", YLabel: "f'(x)²·φ(x)",
		Series: series, VLines: []float64{0}, DPI: pg.DPI}
	return nil
}

func momentumReport(r *report.Report, acts []*actResult, pg *page) {
	c := pg.config
	pg.Burn, pg.Elements = burnIn(c), acts[0].Phases[0].All().Elements
	pg.WF9, pg.WF99 = probe.WindowFactor(0.9, c.Window), probe.WindowFactor(0.99, c.Window)
	var rows [][]any
	for _, a := range acts {
		var series []report.Series
		for _, p := range a.Phases {
			for _, cmp := range p.Buffers {
				rows = append(rows, append([]any{a.Act.Title(), p.Name}, cmp.Cells()...))
				if cmp.Form != probe.EMA {
					continue
				}
				s := cmp.BlockSeries(fmt.Sprintf("%s β=%g", p.Name, cmp.Beta), c.Window/c.Blocks)
				s.Dashed = p.Name != "frozen"
				series = append(series, s)
			}
		}
		pg.MomentumPlots = append(pg.MomentumPlots, namedPlot{"momentum_" + a.Act.Key(), report.PlotSpec{
			Title:  fmt.Sprintf("%s: measured Var(m)/Var(g) ÷ stationary prediction, per block", a.Act.Title()),
			XLabel: "step after burn-in (block centre)", YLabel: "measured / predicted", Series: series,
			HLines: []float64{1, probe.WindowFactor(0.99, c.Window)}, Width: 6.5, Height: 4.5, DPI: c.DPI}})
	}
	pg.MomentumTable = report.TableData{Header: append([]string{"activation", "phase"}, probe.ComparisonHeader...), Rows: rows}
	momentumSummary(c, acts, pg)
}

// momentumSummary finds where the formulas held: the largest |z| at
// frozen weights, and measured/expected of the EMA buffers in each window
// per β, over the activations.
func momentumSummary(c config, acts []*actResult, pg *page) {
	for _, a := range acts {
		for _, cmp := range a.Phases[len(a.Phases)-1].Buffers { // frozen
			pg.FrozenZ = math.Max(pg.FrozenZ, math.Abs(cmp.Z()))
		}
	}
	var lags, deficit []float64 // deficit: 1 − measured/expected for β = 0.99, per window
	for i, lr := range c.WindowLRs {
		var cmps []probe.Comparison
		for _, a := range acts {
			cmps = append(cmps, a.Phases[i+1].Buffers...) // phase i+1 is window i
		}
		var w []lrRange
		for _, beta := range []float64{0.9, 0.99} {
			lo, hi, l := probe.ExpectedRange(cmps, probe.EMA, beta)
			w, lags = append(w, lrRange{lr, beta, lo, hi}), append(lags, l...)
		}
		pg.WindowRanges, deficit = append(pg.WindowRanges, w), append(deficit, 1-w[1].Hi)
	}
	pg.LagLo, pg.LagHi = slices.Min(lags), slices.Max(lags)
	pg.Deficit, pg.Shrinks = deficit[0] > 0.1, len(deficit) > 1
	for i := 1; i < len(deficit); i++ {
		pg.Shrinks = pg.Shrinks && c.WindowLRs[i] < c.WindowLRs[i-1] && deficit[i] < deficit[i-1]
	}
}

func gradientReport(r *report.Report, acts []*actResult, pg *page) {
	c := pg.config
	pg.Ref, pg.Results = acts[0].Act.Title(), acts
	var rows, drows [][]any
	var series []report.Series
	for _, a := range acts {
		k := a.Act.Key()
		for pi, p := range a.Phases {
			for ti, t := range p.Grad {
				name := p.GradName(ti)
				rows = append(rows, []any{a.Act.Title(), p.Name, name, t.Var, t.MeanSq, t.Var / t.MeanSq, t.Var / acts[0].Phases[pi].Grad[ti].Var})
			}
			drows = append(drows, []any{a.Act.Title(), p.Name, p.UnitMean, p.UnitMeanSq, r.Get("normal." + k + ".E_d1sq")})
			p.Record(r, k+"."+p.Name) // momentum.*, grad.*, net.*
		}
		r.Set("accuracy."+k, a.Accuracy)
		r.Set("train."+k+".var", a.Train.Var)
		r.Set("train."+k+".loss", a.Train.Loss)
		if len(a.Train.Ends) > 0 {
			series = append(series, experiment.StepSeries(a.Act.Title(), a.Train.Ends, a.Train.Var))
		}
	}
	pg.GradientVariance = report.TableData{Header: []string{"activation", "phase", "tensor", "Σ Var(g)", "Σ mean(g)²", "Var / mean²",
		"Σ Var(g) / " + pg.Ref + "'s"}, Rows: rows}
	pg.NetDerivative = report.TableData{Header: []string{"activation", "phase", "E[f'(z)] in the network", "E[f'(z)²] in the network",
		"E[f'(X)²], X ~ N(0,1)"}, Rows: drows}
	if len(series) > 0 {
		pg.TrainVariance = []report.PlotSpec{{Title: "Gradient variance during training", XLabel: "step",
			YLabel: fmt.Sprintf("Σ_j Var(g_j) over %d steps", c.VarBlock), Series: series, LogY: true, DPI: c.DPI}}
	}
}

// claims checks the documents' claims about gradient variance and
// momentum; the words are the template's "claim.…" blocks.
func claims(r *report.Report, acts []*actResult, pg *page) {
	g := r.Get
	geluSq, reluSq := g("normal.gelu.E_d1sq"), g("normal.relu.E_d1sq")
	pg.ClosedForm, pg.Buffers = 1.0/3+2/(3*math.Sqrt(3)*math.Pi), buffers
	r.ClaimBlock(reportTmpl, "claim.relu_sq", pg, report.Near(reluSq, 0.5, 1e-12))
	r.ClaimBlock(reportTmpl, "claim.gelu_sq", pg, report.Near(geluSq, 0.42, 0.005))
	r.ClaimBlock(reportTmpl, "claim.gelu_lower_sq", pg, report.VerdictOf(geluSq < reluSq))
	r.ClaimBlock(reportTmpl, "claim.proportional", pg, report.Unclear)
	// acts are the activations that did not diverge, in -acts order.
	find := func(a activation.Activation) *actResult {
		if i := slices.IndexFunc(acts, func(r *actResult) bool { return r.Act == a }); i >= 0 {
			return acts[i]
		}
		return nil
	}
	gelu, relu := find(activation.GELU), find(activation.ReLU)
	if len(acts) == 0 { // every activation diverged: nothing was measured
		r.ClaimBlock(reportTmpl, "claim.momentum_doc", pg, report.Unclear)
		r.ClaimBlock(reportTmpl, "claim.momentum_ratio", pg, report.Unclear)
	} else {
		claimsMomentum(r, acts, gelu, pg)
	}
	// "GELU produces gradients with lower variance" is stated without
	// qualification: one phase where GELU's is higher is a counterexample.
	both := slices.Contains(pg.Acts, activation.GELU) && slices.Contains(pg.Acts, activation.ReLU)
	for _, d := range pg.Diverged {
		if both && (d.Act == activation.GELU || d.Act == activation.ReLU) {
			pg.NotCompared += fmt.Sprintf("%s diverged in phase %s at step %d; ", d.Act.Title(), d.DivergedPhase, d.DivergedStep)
		}
	}
	switch {
	case pg.NotCompared != "":
		pg.NotCompared = strings.TrimSuffix(pg.NotCompared, "; ")
		r.ClaimBlock(reportTmpl, "claim.lower_variance", pg, report.Unclear)
	case gelu != nil && relu != nil:
		for _, p := range gelu.Phases {
			rv, gv := g("grad.relu."+p.Name+".all.var"), g("grad.gelu."+p.Name+".all.var")
			if pg.PhaseVars = append(pg.PhaseVars, phaseVar{p.Name, gv, rv, gv / rv}); gv < rv {
				pg.Lower++
			}
		}
		r.ClaimBlock(reportTmpl, "claim.lower_variance", pg, report.VerdictOf(pg.Lower == len(gelu.Phases)))
	}
}

// claimsMomentum checks the momentum claims on GELU's measurements, or
// the first activation's if GELU was not measured (or diverged).
func claimsMomentum(r *report.Report, acts []*actResult, gelu *actResult, pg *page) {
	g := r.Get
	pg.Quoted = acts[0]
	if gelu != nil {
		pg.Quoted = gelu
	}
	docOK, emaOK := true, true
	for _, b := range buffers {
		k := fmt.Sprintf("momentum.%s.frozen.%s.b%g.", pg.Quoted.Act.Key(), b.Form, b.Beta)
		docOK = docOK && math.Abs(g(k+"doc_ratio")-1) < 0.1
		emaOK = emaOK && (b.Form != probe.EMA || math.Abs(g(k+"z")) < 4)
	}
	q := "momentum." + pg.Quoted.Act.Key() + ".frozen."
	pg.HB = g(q + "heavy_ball.b0.9.ratio")
	pg.HBOverEMA = pg.HB / ((1 - 0.9) / (1 + 0.9))
	pg.MeanSqFrozen = g(q+"ema.b0.9.grad_mean_sq") / g(q+"ema.b0.9.grad_var")
	pg.MeanSqInit = g("grad."+pg.Quoted.Act.Key()+".init.all.mean_sq") / g("grad."+pg.Quoted.Act.Key()+".init.all.var")
	r.ClaimBlock(reportTmpl, "claim.momentum_doc", pg, report.VerdictOf(docOK))
	r.ClaimBlock(reportTmpl, "claim.momentum_ratio", pg, report.VerdictOf(emaOK && math.Abs(pg.HBOverEMA-1) < 0.1))
}
