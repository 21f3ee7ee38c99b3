package main

// report.md (its prose, the claim's words included, is report.md.tmpl),
// summary.json and the tables.

import (
	_ "embed"
	"math"
	"path/filepath"
	"text/template"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportText string

var reportTmpl = template.Must(report.ParseBlocks("report.md.tmpl", reportText, "table"))

// change is how far one setting's final validation losses are from
// float32's, seed by seed: loss / float32's − 1 (NaN where a run
// diverged), the largest magnitude and the median, also in percent.
type change struct {
	Seeds                 []float64
	Worst, Median         float64
	WorstPct, MedianPct   float64
	Lower, Higher, Paired int // seeds below and above float32, of those that finished
}

func changeOf(full, other []float64) change {
	var c change
	for i := range full {
		d := other[i]/full[i] - 1
		c.Seeds = append(c.Seeds, d)
		if a := math.Abs(d); !(a <= c.Worst) {
			c.Worst = a // NaN (a diverged run) sticks
		}
		switch {
		case d < 0:
			c.Lower++
		case d > 0:
			c.Higher++
		}
	}
	c.Median = experiment.Median(c.Seeds)
	c.WorstPct, c.MedianPct, c.Paired = 100*c.Worst, 100*c.Median, c.Lower+c.Higher
	return c
}

// view is what report.md.tmpl sees.
type view struct {
	C       config
	D       interface{ Size() int }
	Data    results
	Epochs  float64
	TolPct  float64
	BF16    change // bfloat16 autocast against float32
	Control change // float32 from perturbed weights against float32
	// Diverged are the runs stopped by a NaN or infinite value.
	Diverged []*runResult
	BLAS     string // gemm.Name: the results are bit for bit the same on the same BLAS
}

func writeReport(c config, res *results) error {
	r, err := report.NewFromTemplate(c.Out, reportTmpl, c, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := &view{C: c, D: res.Data.Vocab, Data: *res, Epochs: float64(c.Steps*c.Batch*c.T) / float64(len(res.Data.Train)), TolPct: 100 * c.Tolerance,
		Diverged: experiment.DivergedRuns(res.Runs), BLAS: gemm.Name()}
	groups := experiment.Groups(res.Runs) // in the order of settings
	for _, g := range groups {
		r.Set(g.Name+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(g.Name+".final_train_bpc", experiment.Median(g.Final("train_bpc")))
	}
	full := groups[0].Final("val_bpc")
	v.BF16, v.Control = changeOf(full, groups[1].Final("val_bpc")), changeOf(full, groups[2].Final("val_bpc"))
	for _, ch := range []struct {
		key string
		c   change
	}{{"bfloat16", v.BF16}, {"control", v.Control}} {
		r.Set(ch.key+".val_change.worst", ch.c.Worst)
		r.Set(ch.key+".val_change.median", ch.c.Median)
	}
	for _, claim := range []struct {
		name string
		ok   bool
	}{{"claim.within", v.BF16.Worst <= c.Tolerance}, {"claim.median", math.Abs(v.BF16.Median) <= c.Tolerance}} {
		verdict := report.VerdictOf(claim.ok)
		if len(v.Diverged) > 0 {
			verdict = report.Unclear
		}
		if err := r.ClaimBlock(reportTmpl, claim.name, v, verdict); err != nil {
			return err
		}
	}
	if err := r.ExecuteBlocks(reportTmpl, v, map[string]func(...string) error{
		"table": func(...string) error { return resultsTable(r, v, groups) },
	}); err != nil {
		return err
	}
	if err := experiment.WriteCurves(r, "curves", res.Runs, []string{"setting", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Name, run.Seed, step} }); err != nil {
		return err
	}
	// Wall times differ between reruns: they go to timing.csv, outside the
	// report, and nowhere else.
	if err := experiment.WriteTiming(filepath.Join(c.Out, "timing.csv"), res.Runs); err != nil {
		return err
	}
	return r.Close()
}

// resultsTable has a row per seed: the final losses of each setting and
// the relative changes of the validation loss from float32's.
func resultsTable(r *report.Report, v *view, groups []*experiment.Group[setting]) error {
	var rows [][]any
	for i := range groups[0].Runs {
		row := []any{groups[0].Runs[i].Seed}
		for _, g := range groups {
			run := g.Runs[i]
			row = append(row, run.UnlessDiverged(run.Curve.Last("train_bpc")), run.UnlessDiverged(run.Curve.Last("val_bpc")))
		}
		rows = append(rows, append(row, 100*v.BF16.Seeds[i], 100*v.Control.Seeds[i]))
	}
	return r.Table("results", []string{"seed", "float32 train", "float32 val", "bfloat16 train", "bfloat16 val",
		"control train", "control val", "bfloat16 val change %", "control val change %"}, rows)
}
