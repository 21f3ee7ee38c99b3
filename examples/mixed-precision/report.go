package main

// report.md (its prose, the claim's words included, is report.md.tmpl),
// summary.json and the tables.

import (
	_ "embed"
	"math"
	"text/template"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportText string

var reportTmpl = template.Must(report.ParseBlocks("report.md.tmpl", reportText, "table"))

// view is what report.md.tmpl sees.
type view struct {
	C      config
	D      interface{ Size() int }
	Data   results
	Epochs float64
	// Change is each seed's final validation loss under autocast relative
	// to float32's, minus 1 (NaN where a run diverged); Worst the largest
	// magnitude, Median the median.
	Change        []float64
	Worst, Median float64
	// The same, and the tolerance, in percent.
	WorstPct, MedianPct, TolPct float64
	Diverged                    []*runResult
	// StepMS is each precision's mean training step in ms, by name.
	StepMS map[string]float64
	experiment.Speed
}

func writeReport(c config, res *results) error {
	r, err := report.NewFromTemplate(c.Out, reportTmpl, c, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := &view{C: c, D: res.Data.Vocab, Data: *res, Epochs: float64(c.Steps*c.Batch) / float64(res.Data.Train.Len()),
		Diverged: experiment.DivergedRuns(res.Runs), StepMS: map[string]float64{}, Speed: experiment.SpeedOf(res.Runs)}
	groups := experiment.Groups(res.Runs)
	for _, g := range groups {
		r.Set(g.Name+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(g.Name+".final_train_bpc", experiment.Median(g.Final("train_bpc")))
		var sec float64
		for _, run := range g.Runs {
			sec += run.StepSeconds
		}
		v.StepMS[g.Name] = 1e3 * sec / float64(len(g.Runs)*c.Steps)
	}
	full, bf16 := groups[0].Final("val_bpc"), groups[1].Final("val_bpc")
	for i := range full {
		v.Change = append(v.Change, bf16[i]/full[i]-1)
		if a := math.Abs(v.Change[i]); !(a <= v.Worst) {
			v.Worst = a // NaN (a diverged run) sticks
		}
	}
	v.Median = experiment.Median(v.Change)
	v.WorstPct, v.MedianPct, v.TolPct = 100*v.Worst, 100*v.Median, 100*c.Tolerance
	r.Set("val_bpc_change.worst", v.Worst)
	r.Set("val_bpc_change.median", v.Median)
	r.Set("train_seconds", v.StepSeconds)
	verdict := report.VerdictOf(v.Worst <= c.Tolerance)
	if len(v.Diverged) > 0 {
		verdict = report.Unclear
	}
	if err := r.ClaimBlock(reportTmpl, "claim.within", v, verdict); err != nil {
		return err
	}
	if err := r.ExecuteBlocks(reportTmpl, v, map[string]func(...string) error{
		"table": func(...string) error { return resultsTable(r, v, groups) },
	}); err != nil {
		return err
	}
	if err := experiment.WriteCurves(r, "curves", res.Runs, []string{"precision", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Name, run.Seed, step} }); err != nil {
		return err
	}
	return r.Close()
}

// resultsTable has a row per seed: the final losses in each precision and
// the relative change of the validation loss.
func resultsTable(r *report.Report, v *view, groups []*experiment.Group[graph.Precision]) error {
	var rows [][]any
	full, bf16 := groups[0], groups[1]
	for i, run := range full.Runs {
		b := bf16.Runs[i]
		rows = append(rows, []any{run.Seed,
			run.UnlessDiverged(run.Curve.Last("train_bpc")), run.UnlessDiverged(run.Curve.Last("val_bpc")),
			b.UnlessDiverged(b.Curve.Last("train_bpc")), b.UnlessDiverged(b.Curve.Last("val_bpc")),
			100 * v.Change[i]})
	}
	return r.Table("results", []string{"seed", "float32 train bits/char", "float32 val bits/char",
		"bfloat16 train bits/char", "bfloat16 val bits/char", "val change %"}, rows)
}
