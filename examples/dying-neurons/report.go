package main

// What report.md.tmpl shows and says: the single neuron of part (a), and
// of part (b) dead.csv, the runs table, the best accuracies and one pair
// of plots per (learning rate, bias init); and the claims, whose words are
// in the template too (report.ClaimBlock), with verdicts computed here.

import (
	"embed"
	"fmt"
	"math"
	"slices"
	"text/template"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl keys.txt
var files embed.FS

var reportTmpl = template.Must(report.ParseTemplateFS(files))

// page is what report.md.tmpl shows and its claims say.
type page struct {
	config
	R                                            *report.Report // the claims read measurements back with .R.Get
	NeuronX, NeuronW, NeuronB, NeuronT, NeuronLR float64
	Starts                                       []float64 // of the descent
	NeuronGradient, NeuronDescent                report.TableData
	DescentPlot                                  report.PlotSpec
	GELURoot, SiLURoot                           float64 // the zeros of GELU' and SiLU'
	GELULossAtM1                                 float64 // the neuron's loss at z = −1
	GELUUnderflow                                float64 // GELU' is 0 in float64 below it
	DeadBelow                                    []float64
	Dead                                         string // dead.csv's link
	Runs, BestAccuracy                           report.TableData
	Plots                                        []lrBiasPlots
	Root                                         float64   // the first zero of GELU' on [−10, 10] (NaN: none), for the claims
	Roots                                        []float64 // all of them
	Pairs, Died                                  []pair    // ReLU and GELU at the same lr and bias init; those where ReLU's units died
	Lower, Higher, Learned                       int       // GELU's dead fraction lower, higher; GELU learned where ReLU died
	ReLUDeadZ                                    []*runResult
	Far                                          int // ReLU runs whose dead units' median max z is below −0.5
}

// pair is a ReLU run and a GELU run of the same lr and bias init.
type pair struct{ ReLU, GELU *runResult }

// lrBiasPlots are the plots of one learning rate and bias init.
type lrBiasPlots struct {
	LR, Tol     float64
	Bias        string
	Dead, Slope report.PlotSpec
	Zero        []string // activations whose slope is 0 at every probe: not in Slope
}

// Name is the plots' file name suffix.
func (p lrBiasPlots) Name() string { return fmt.Sprintf("lr%g_bias%s", p.LR, p.Bias) }

func newPage(c config) *page {
	geluMin, _, _, _ := analysis.Minimum(activation.GELU) // where GELU' = 0
	siluMin, _, _, _ := analysis.Minimum(activation.SiLU)
	pg := &page{config: c,
		NeuronGradient: report.TableData{Header: []string{"activation", "a(−1)", "a'(−1)", "analytic ∂L/∂w", "graph ∂L/∂w float64", "rel. error",
			"graph ∂L/∂w float32", "rel. error f32"}},
		NeuronDescent: report.TableData{Header: []string{"activation", "start z", "a'(start)", "loss at start", "z after descent", "a'(end)",
			"loss after descent"}},
		DescentPlot: report.PlotSpec{Title: "Single neuron: z = w·x + b during gradient descent", XLabel: "step", YLabel: "z",
			HLines: []float64{0, geluMin}, LegendLeft: true, Width: 6.5, Height: 5, DPI: c.DPI}, NeuronX: neuronX, NeuronW: neuronW, NeuronB: -1 - neuronW*neuronX, NeuronT: neuronT, NeuronLR: neuronLR,
		Starts: neuronStarts, GELURoot: geluMin, SiLURoot: siluMin,
		GELULossAtM1:  0.5 * math.Pow(activation.GELU.F(-1)-neuronT, 2),
		GELUUnderflow: probe.DeadBelow(activation.GELU, 0)}
	for _, a := range c.Acts {
		pg.DeadBelow = append(pg.DeadBelow, probe.DeadBelow(a, c.Tol))
	}
	return pg
}

func sweepReport(r *report.Report, runs []*runResult, pg *page) (err error) {
	pg.Dead, err = r.Capture(func() error {
		return experiment.WriteCurves(r, "dead", runs, []string{"activation", "lr", "bias", "step"}, func(run *runResult, step int) []any {
			return []any{run.Setting.Act.Name(), run.Setting.LR, run.Setting.Bias, step}
		})
	})
	if err != nil {
		return err
	}
	var rows [][]any
	for _, run := range runs {
		dead, exact, v, div := run.Curve.Metric("dead_fraction"), run.Curve.Last("dead_fraction_exact"), run.Values, run.DivergedStep()
		r.SetAll("run."+run.Name+".", v) // accuracy and DeadProbe.EndValues
		r.SetAll("run."+run.Name+".", map[string]float64{"dead_start": dead[0], "dead_end": dead[len(dead)-1], "dead_max": slices.Max(dead),
			"dead_exact_end": exact, "diverged_step": float64(div), "median_max_abs_deriv": run.Curve.Last("median_max_abs_deriv")})
		rows = append(rows, []any{run.Setting.Act.Title(), run.Setting.LR, run.Setting.Bias, dead[0], slices.Max(dead), dead[len(dead)-1], exact,
			int(v["ever_dead"]), int(v["revived"]), v["dead_max_z_median"], run.Curve.Last("median_max_abs_deriv"), v["mean_sq_deriv"], v[accuracy], run.DivergedCell()})
	}
	pg.Runs = report.TableData{Header: []string{"activation", "lr", "bias", "dead at start", "dead max", "dead at end", "exactly dead at end",
		"units ever dead", "of them alive at end", "median max z of dead units", "median max |f'| at end", "E[f'(z)²] at end",
		"test accuracy", "diverged at step"}, Rows: rows}
	header := []string{"activation"}
	for _, b := range pg.Biases {
		header = append(header, "bias "+b)
	}
	// Every (activation, bias) ran, at every learning rate.
	pg.BestAccuracy = experiment.BestTable(runs, header, pg.Acts.Titles(),
		func(i, j int, s setting) bool { return s.Act == pg.Acts[i] && s.Bias == pg.Biases[j] },
		func(r *runResult) float64 { return r.Values[accuracy] }, // NaN if it diverged
		func(best *runResult) any {
			return fmt.Sprintf("%s (lr %g)", report.Format(best.Values[accuracy]), best.Setting.LR)
		})
	for _, b := range pg.Biases {
		for _, lr := range pg.LRs {
			pg.Plots = append(pg.Plots, plots(pg.config, runs, lr, b))
		}
	}
	return nil
}

// plots draws the dead fraction and the median max |f'| of every
// activation at one learning rate and bias init.
func plots(c config, runs []*runResult, lr float64, b string) lrBiasPlots {
	at := experiment.Select(runs, func(s setting) bool { return s.Bias == b && s.LR == lr })
	title := func(r *runResult) string { return r.Setting.Act.Title() }
	// A run whose median unit never passes any gradient has nothing to show
	// on a log axis: the caption names it instead.
	slope, zero := report.SplitLogY(experiment.RunSeries(at, "median_max_abs_deriv", title))
	p := lrBiasPlots{LR: lr, Tol: c.Tol, Bias: b, Zero: zero}
	p.Dead = report.PlotSpec{Title: fmt.Sprintf("Dead hidden units, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: fmt.Sprintf("fraction with |f'| ≤ %g on all", c.Tol), Series: experiment.RunSeries(at, "dead_fraction", title),
		HLines: []float64{0, 1}, Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true}
	p.Slope = report.PlotSpec{Title: fmt.Sprintf("Gradient a typical unit can pass, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: "median over units of max |f'|", Series: slope, LogY: true, HLines: []float64{c.Tol},
		Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true}
	if c.Tol == 0 { // -tol 0: a log axis has no line at 0
		p.Slope.HLines = nil
	}
	return p
}

// claims checks the documents' claims (the words are the template's
// "claim.…" blocks): the single neuron, then GELU against ReLU at every
// (learning rate, bias init) that ran both, and where dead ReLU units'
// pre-activations are.
func claims(r *report.Report, runs []*runResult, pg *page) error {
	g := r.Get // a key never set fails the report
	roots, err := analysis.Roots(activation.GELU, 1, -10, 10)
	if err != nil {
		return err
	}
	pg.R, pg.Roots, pg.Root = r, roots, math.NaN()
	if len(roots) > 0 {
		pg.Root = roots[0]
	}
	if len(roots) == 1 {
		r.Set("gelu.d1_root", pg.Root)
	}
	geluEnd, geluD1End := g("descent.gelu.z0_-1.z_end"), g("descent.gelu.z0_-1.d1_end")
	r.ClaimBlock(reportTmpl, "claim.relu_zero", pg,
		report.VerdictOf(g("neuron.relu.float64.dL_dw") == 0 && g("neuron.relu.float32.dL_dw") == 0 && g("descent.relu.z0_-1.z_end") == -1))
	r.ClaimBlock(reportTmpl, "claim.gelu_d1", pg, report.VerdictOf(math.Abs(g("neuron.gelu.d1_at_m1")+0.083) <= 0.0005))
	r.ClaimBlock(reportTmpl, "claim.nonzero", pg, report.VerdictOf(len(roots) == 0))
	r.ClaimBlock(reportTmpl, "claim.learns", pg, report.VerdictOf(!(geluEnd < -1 && math.Abs(geluD1End) < math.Abs(g("neuron.gelu.d1_at_m1")))))
	is := func(a activation.Activation) func(setting) bool { return func(s setting) bool { return s.Act == a } }
	for _, p := range experiment.Pairs(runs, is(activation.ReLU), is(activation.GELU), func(s setting) any { return [2]any{s.LR, s.Bias} }) {
		pg.Pairs = append(pg.Pairs, pair{p[0], p[1]})
	}
	var reluDead, geluDead []float64
	anyDead := false
	for _, p := range pg.Pairs {
		re, ge := p.ReLU.Curve.Last("dead_fraction"), p.GELU.Curve.Last("dead_fraction")
		reluDead, geluDead, anyDead = append(reluDead, re), append(geluDead, ge), anyDead || re > 0 || ge > 0
		if re >= 0.5 { // half or more of ReLU's units died
			if pg.Died = append(pg.Died, p); p.GELU.Values[accuracy] > 0.5 {
				pg.Learned++
			}
		}
	}
	cmp := experiment.Compare(geluDead, reluDead)
	pg.Lower, pg.Higher = cmp.Lower, cmp.Higher
	for _, run := range runs {
		if z := run.Values["dead_max_z_median"]; run.Setting.Act == activation.ReLU && !math.IsNaN(z) {
			if pg.ReLUDeadZ = append(pg.ReLUDeadZ, run); z < -0.5 {
				pg.Far++
			}
		}
	}
	if len(pg.Pairs) > 0 {
		r.ClaimBlock(reportTmpl, "claim.fewer_die", pg, report.Decide(anyDead && pg.Higher == 0 && pg.Lower > 0, pg.Higher > 0))
	}
	if len(pg.Died) > 0 {
		r.ClaimBlock(reportTmpl, "claim.keeps_learning", pg, report.Decide(4*pg.Learned >= 3*len(pg.Died), 4*pg.Learned <= len(pg.Died)))
	}
	if len(pg.ReLUDeadZ) > 0 {
		r.ClaimBlock(reportTmpl, "claim.near_zero", pg, report.Decide(pg.Far == 0, pg.Far == len(pg.ReLUDeadZ)))
	}
	return r.Err()
}
