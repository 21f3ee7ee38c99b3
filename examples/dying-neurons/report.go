package main

// What report.md.tmpl shows: the single neuron of part (a), and of part
// (b) dead.csv, the runs table, the best accuracies and one pair of plots
// per (learning rate, bias init); and the summary keys.

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// page is what report.md.tmpl shows besides the claims.
type page struct {
	config
	NeuronX, NeuronW, NeuronB, NeuronT, NeuronLR float64
	Starts                                       string // of the descent: "-3, -1, -0.5"
	NeuronGradient, NeuronDescent                report.TableData
	DescentPlot                                  report.PlotSpec
	GELURoot, SiLURoot                           float64  // the zeros of GELU' and SiLU'
	GELULossAtM1                                 float64  // the neuron's loss at z = −1
	HiddenList, TestImages                       string   // TestImages: "the first 10000" or "a seeded subset of N"
	GELUUnderflow                                float64  // GELU' is 0 in float64 below it
	DeadBelow                                    []string // "<activation> <z below which |f'| ≤ tol>"
	Dead                                         string   // dead.csv's link
	Runs, BestAccuracy                           report.TableData
	Plots                                        []lrBiasPlots
}

// lrBiasPlots are the plots of one learning rate and bias init.
type lrBiasPlots struct {
	LR, Tol     float64
	Bias        string
	Dead, Slope report.PlotSpec
	Zero        []string // activations whose slope is 0 at every probe: not in Slope
}

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

func newPage(c config) *page {
	starts := make([]string, len(neuronStarts))
	for i, z := range neuronStarts {
		starts[i] = fmt.Sprint(z)
	}
	pg := &page{config: c, NeuronX: neuronX, NeuronW: neuronW, NeuronB: -1 - neuronW*neuronX, NeuronT: neuronT, NeuronLR: neuronLR,
		Starts: strings.Join(starts, ", "), GELURoot: rootOf(activation.GELU), SiLURoot: rootOf(activation.SiLU),
		GELULossAtM1: 0.5 * math.Pow(activation.GELU.F(-1)-neuronT, 2), HiddenList: strings.ReplaceAll(c.Hidden.String(), ",", " → "),
		TestImages: "the first 10000", GELUUnderflow: deadBelow(activation.GELU, 0)}
	if c.TestN > 0 {
		pg.TestImages = fmt.Sprintf("a seeded subset of %d", c.TestN)
	}
	for _, a := range c.Acts {
		pg.DeadBelow = append(pg.DeadBelow, fmt.Sprintf("%s %s", a.Title(), report.Format(deadBelow(a, c.Tol))))
	}
	return pg
}

func sweepReport(r *report.Report, c config, runs []*runResult, pg *page) (err error) {
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
	pg.Runs = report.TableData{Header: []string{"activation", "lr", "bias", "dead at start", "dead max", "dead at end", "exactly dead at end",
		"units ever dead", "of them alive at end", "median max z of dead units", "median max |f'| at end", "E[f'(z)²] at end",
		"test accuracy", "diverged at step"}, Rows: rows}
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
	pg.BestAccuracy = report.TableData{Header: header, Rows: rows}
	for _, b := range c.Biases {
		for _, lr := range c.LRs {
			pg.Plots = append(pg.Plots, plots(c, runs, lr, b))
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
func plots(c config, runs []*runResult, lr float64, b string) lrBiasPlots {
	var dead, shown []report.Series
	p := lrBiasPlots{LR: lr, Tol: c.Tol, Bias: b}
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
			p.Zero = append(p.Zero, s.Name)
		}
	}
	p.Dead = report.PlotSpec{Title: fmt.Sprintf("Dead hidden units, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: fmt.Sprintf("fraction with |f'| ≤ %g on all", c.Tol), Series: dead, HLines: []float64{0, 1},
		Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true}
	p.Slope = report.PlotSpec{Title: fmt.Sprintf("Gradient a typical unit can pass, lr %g, bias init %s", lr, b),
		XLabel: "step", YLabel: "median over units of max |f'|", Series: shown, LogY: true, HLines: []float64{c.Tol},
		Width: 5, Height: 3.2, DPI: c.DPI, LegendBottom: true}
	return p
}

// Name is the plots' file name suffix.
func (p lrBiasPlots) Name() string { return fmt.Sprintf("lr%g_bias%s", p.LR, p.Bias) }

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
