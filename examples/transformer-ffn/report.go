package main

// report.md and summary.json: the numbers, tables and plots report.md.tmpl
// shows, computed from the runs. The words are all in the template.

import (
	_ "embed"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// key is the activation's name in summary keys and folder names.
func key(a activation.Activation) string {
	return strings.NewReplacer(":", "_", ".", "_").Replace(a.Name())
}

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

// smooth is the number of steps averaged in the plotted training loss.
const smooth = 10

// page is what report.md.tmpl shows besides the summary keys.
type page struct {
	config
	D                        transformer.CharData
	S                        CharFFN
	Smooth, MinSeeds, Params int
	Setup, Results           report.TableData
	Curves                   string // curves.csv's link
	Loss, LossLate           report.PlotSpec
	Epochs                   float64 // passes over the training windows
	Base                     string  // the activation the others are compared with
	Comparison               report.TableData
	Diffs                    []diff
	Rises                    []experiment.Rise[activation.Activation] // runs whose training loss climbed by more than 0.2 nats
	BLAS                     string                                   // gemm.Name: the results are bit for bit the same on the same BLAS
	HalfStep                 int                                      // where the late validation plot starts
	// Diverged are the runs stopped by a NaN or infinite value, of NRuns;
	// NoLine and NoLateLine the lines left out of the plots for want of
	// points (every run diverged before them).
	Diverged           []*runResult
	NRuns              int
	NoLine, NoLateLine []string
}

func (p *page) ValPercent() float64 { return 100 * p.ValFraction }
func (p *page) Predicted() int      { return p.Steps * p.Batch }

// diff is one activation's final validation loss against the first one's,
// in nats/char and in bits/char.
type diff struct {
	experiment.Diff
	BitsDelta, BitsSE float64
}

func writeReport(c config, res *results) error {
	d, s := res.Data, res.Shape
	pg := &page{config: c, D: d, S: s, Smooth: smooth, MinSeeds: experiment.MinPairs(0.05), Params: s.Params(),
		BLAS: gemm.Name(), Epochs: float64(c.Steps*c.Batch) / float64(d.Train.Len()), HalfStep: (c.Steps + 1) / 2}
	r, err := report.NewFromTemplate(c.Out, reportTmpl, pg, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	if pg.Setup, err = report.RenderTable(reportTmpl, "setup", pg); err != nil {
		return err
	}
	for _, row := range pg.Setup.Rows { // a number in setup.csv and summary.json
		if row[0] == "training windows" {
			row[1] = d.Train.Len()
		}
	}
	pg.Results = report.TableData{Header: []string{"activation", "seed", "initial val loss", "final train loss", "final val loss", "val bits/char",
		"val accuracy", "largest rise of train loss", "at step"}}
	for _, run := range res.Runs {
		rise, at := experiment.MaxRise(run.Vectors["step_loss"], smooth)
		last := run.Curve.Last
		final := func(m string) any { return run.UnlessDiverged(last(m)) }
		pg.Results.Rows = append(pg.Results.Rows, []any{run.Setting.Name(), run.Seed, run.Curve.First("val_loss"), final("train_loss"),
			final("val_loss"), final("val_bpc"), final("val_accuracy"), rise, at})
	}
	pg.Diverged, pg.NRuns = experiment.DivergedRuns(res.Runs), len(res.Runs)
	if len(pg.Diverged) > 0 {
		r.Describe("*.diverged", "runs of this activation stopped by a NaN or infinite loss, gradient or weight (written when some run diverged); the medians are over the others")
	}
	for _, g := range experiment.Groups(res.Runs) {
		k := key(g.Setting)
		r.Set(k+".initial_val_loss", experiment.Median(g.First("val_loss")))
		for _, m := range metrics {
			r.Set(k+".final_"+m, experiment.Median(g.Final(m)))
		}
		r.Set(k+".final_train_bpc", bits(experiment.Median(g.Final("train_loss"))))
		rise, at := g.MaxRise("step_loss", smooth)
		r.Set(k+".train_loss_max_rise", rise)
		r.Set(k+".train_loss_max_rise_step", at)
		if len(pg.Diverged) > 0 {
			r.Set(k+".diverged", g.Diverged())
		}
	}
	if err := curves(r, c, res, pg); err != nil {
		return err
	}
	if err := comparison(r, res, pg); err != nil {
		return err
	}
	// Wall times differ between reruns: they go to timing.csv, outside the
	// report, and nowhere else.
	if err := experiment.WriteTiming(filepath.Join(c.Out, "timing.csv"), res.Runs); err != nil {
		return err
	}
	if err := r.Execute(reportTmpl, pg); err != nil {
		return err
	}
	r.DescribeKeys(keysText)
	for k, v := range map[string]int{"data.chars": d.Chars, "data.vocab": s.Vocab, "data.train_windows": d.Train.Len(),
		"data.val_windows": d.Val.Len(), "data.eval_windows": d.Eval.Len(), "model.params": s.Params()} {
		r.Set(k, v)
	}
	return r.Close()
}

// curves writes every evaluation to curves.csv and plots the medians over
// seeds, shaded from the lowest to the highest seed.
func curves(r *report.Report, c config, res *results, pg *page) (err error) {
	pg.Curves, err = r.Capture(func() error {
		return experiment.WriteCurves(r, "curves", res.Runs, []string{"activation", "seed", "step"},
			func(run *runResult, step int) []any { return []any{run.Setting.Name(), run.Seed, step} })
	})
	if err != nil {
		return err
	}
	var train, val, late []report.Series
	for _, g := range experiment.Groups(res.Runs) {
		tr, err := g.TrailingBand("step_loss", smooth)
		if err != nil {
			return err
		}
		vb := g.Band("val_loss")
		va := vb.Series(g.Name+" validation", nil)
		va.Dashed = true
		// A line without points (every run diverged before it) is left
		// out and named in the caption.
		if len(tr.Steps) > 0 {
			train = append(train, tr.Series(g.Name+" train", nil))
		} else {
			pg.NoLine = append(pg.NoLine, g.Name+" train")
		}
		val = append(val, va) // every run was evaluated at step 0
		if lb := vb.From(pg.HalfStep); len(lb.Steps) > 0 && lb.Steps[len(lb.Steps)-1] >= pg.HalfStep {
			late = append(late, lb.Series(g.Name, nil))
		} else {
			pg.NoLateLine = append(pg.NoLateLine, g.Name)
		}
	}
	pg.Loss = report.PlotSpec{Title: "Loss vs step", XLabel: "step", YLabel: "cross-entropy (nats/char)", Series: append(train, val...), DPI: c.DPI}
	pg.LossLate = report.PlotSpec{Title: "Validation loss, second half of training", XLabel: "step", YLabel: "cross-entropy (nats/char)", Series: late, DPI: c.DPI}
	return nil
}

// comparison compares each activation's final validation loss with the
// first one's: per seed on the same windows, with the evaluation noise, and
// over seeds.
func comparison(r *report.Report, res *results, pg *page) error {
	gs := experiment.Groups(res.Runs)
	if len(gs) < 2 {
		return nil
	}
	pg.Base = gs[0].Name
	ds, t, err := experiment.DiffsFromFirst(gs, "val_rows", "val_loss", 32, []string{"Δ final val loss (nats)", "Δ bits/char", "standard error (nats)", "z"},
		func(delta, se float64) []any { return []any{delta, bits(delta), se, delta / se} })
	if err != nil {
		return err
	}
	pg.Comparison = t
	for _, d := range ds {
		d.Set(r, d.Name, "val_loss")
		pg.Diffs = append(pg.Diffs, diff{d, bits(d.Delta), bits(d.SE)})
	}
	pg.Rises = experiment.Rises(res.Runs, "step_loss", smooth, 0.2)
	return nil
}
