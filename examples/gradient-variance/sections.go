package main

// The numbers, tables and plots of the report's sections (report.md.tmpl
// lays them out): 1. E[f'(X)²] under N(0, 1), 2. momentum-buffer variance
// against the predictions, 3. gradient variance by activation.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

// page is what report.md.tmpl shows besides the claims.
type page struct {
	config
	ReluMinusGELUSq, ReluMinusGELUVar float64 // E[f'²] and Var[f'] of ReLU minus GELU's
	NormalDerivative                  report.TableData
	Integrand                         report.PlotSpec
	OneAt                             float64 // where GELU' = 1: minus GELU's minimum
	Burn, Elements                    int
	WF9, WF99                         float64 // probe.WindowFactor(β, window)
	WindowLRList                      string
	MomentumTable                     report.TableData
	FrozenZ, LagLo, LagHi             float64
	WindowRanges                      []string // "learning rate 0.005: β = 0.9: 0.98–1.01, β = 0.99: …"
	Deficit, Shrinks                  bool     // the β = 0.99 buffers vary too little; less so at lower rates
	MomentumPlots                     []namedPlot
	Ref                               string // the activation the gradient variances are divided by
	GradientVariance, NetDerivative   report.TableData
	TestImages                        int
	Accuracies                        []string
	TrainVariance                     []report.PlotSpec // none or one
}

type namedPlot struct {
	Name string
	Spec report.PlotSpec
}

func derivStats(r *report.Report, pg *page) error {
	c := pg.config
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
	pg.ReluMinusGELUSq = r.Get("normal.relu.E_d1sq") - r.Get("normal.gelu.E_d1sq")
	pg.ReluMinusGELUVar = r.Get("normal.relu.Var_d1") - r.Get("normal.gelu.Var_d1")
	pg.NormalDerivative = report.TableData{Header: []string{"activation", "E[f'(X)]", "E[f'(X)²]", "Var[f'(X)]"}, Rows: rows}
	pg.Integrand = report.PlotSpec{Title: "f'(x)²·φ(x): the integrand of E[f'(X)²]", XLabel: "x", YLabel: "f'(x)²·φ(x)",
		Series: series, VLines: []float64{0}, DPI: c.DPI}
	pg.OneAt = -gelu.MinX
	return nil
}

func momentumReport(r *report.Report, acts []*actResult, pg *page) {
	c := pg.config
	pg.Burn, pg.Elements = burnIn(c), acts[0].Phases[0].All().Elements
	pg.WF9, pg.WF99 = probe.WindowFactor(0.9, c.Window), probe.WindowFactor(0.99, c.Window)
	pg.WindowLRList = strings.ReplaceAll(strings.Trim(fmt.Sprint(c.WindowLRs), "[]"), " ", ", ")
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
	pg.MomentumTable = report.TableData{Header: []string{"activation", "phase", "β", "form", "Σ Var(g)", "Σ mean(g)²", "Var(m)/Var(g) measured",
		"stationary prediction", "expected in window", "z", "Var(m) / documents' formula", "E[m] slope on E[g]", "predicted slope",
		"lag-1 corr. of g", "lag-1 corr. of m"}, Rows: rows}
	momentumSummary(c, acts, pg)
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
		pg.MomentumPlots = append(pg.MomentumPlots, namedPlot{"momentum_" + a.Act.Key(), report.PlotSpec{
			Title:  fmt.Sprintf("%s: measured Var(m)/Var(g) ÷ stationary prediction, per block", a.Act.Title()),
			XLabel: "step after burn-in (block centre)", YLabel: "measured / predicted", Series: series,
			HLines: []float64{1, probe.WindowFactor(0.99, c.Window)}, Width: 6.5, Height: 4.5, DPI: c.DPI}})
	}
}

// momentumSummary finds where the formulas held: the largest |z| at
// frozen weights, and measured/expected of the EMA buffers in each window
// per β, over the activations.
func momentumSummary(c config, acts []*actResult, pg *page) {
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
		pg.WindowRanges = append(pg.WindowRanges, fmt.Sprintf("learning rate %g: %s", lr, strings.Join(ps, ", ")))
	}
	pg.FrozenZ, pg.LagLo, pg.LagHi = frozenZ, lo, hi
	pg.Deficit = len(deficit) > 0 && deficit[0] > 0.1
	pg.Shrinks = len(deficit) > 1
	for i := 1; i < len(deficit); i++ {
		pg.Shrinks = pg.Shrinks && c.WindowLRs[i] < c.WindowLRs[i-1] && deficit[i] < deficit[i-1]
	}
}

func rangeText(mm [2]float64) string {
	if report.Format(mm[0]) == report.Format(mm[1]) {
		return report.Format(mm[0])
	}
	return report.Format(mm[0]) + "–" + report.Format(mm[1])
}

func gradientReport(r *report.Report, acts []*actResult, pg *page) {
	c := pg.config
	ref := acts[0].Act.Title()
	pg.Ref = ref
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
	pg.GradientVariance = report.TableData{Header: []string{"activation", "phase", "tensor", "Σ Var(g)", "Σ mean(g)²", "Var / mean²",
		"Σ Var(g) / " + ref + "'s"}, Rows: rows}
	pg.NetDerivative = report.TableData{Header: []string{"activation", "phase", "E[f'(z)] in the network", "E[f'(z)²] in the network",
		"E[f'(X)²], X ~ N(0,1)"}, Rows: drows}
	pg.TestImages, pg.Accuracies = 10000, acc
	if c.TestN > 0 {
		pg.TestImages = min(c.TestN, pg.TestImages)
	}
	if len(series) > 0 {
		pg.TrainVariance = []report.PlotSpec{{Title: "Gradient variance during training", XLabel: "step",
			YLabel: fmt.Sprintf("Σ_j Var(g_j) over %d steps", c.VarBlock), Series: series, LogY: true, DPI: c.DPI}}
	}
}
