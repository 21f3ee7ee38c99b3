package main

// report.md (its prose, the claim's words included, is report.md.tmpl),
// summary.json, tables, plot and the claim.

import (
	_ "embed"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"path/filepath"
	"text/template"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportText string

var reportTmpl = template.Must(report.ParseBlocks("report.md.tmpl", reportText, "table"))

const alpha = 0.05

type group = experiment.Group[setting]

// view is what report.md.tmpl sees.
type view struct {
	C        config
	Data     []data
	Groups   []*group
	MinSeeds int
	Epochs   float64
	BLAS     string // gemm.Name: the results are bit for bit the same on the same BLAS
	// Diverged are the runs stopped by a NaN or infinite value, of NRuns;
	// NoLine the settings without a line in the plot (every run diverged
	// before its first evaluation after step 0).
	Diverged []*runResult
	NRuns    int
	NoLine   []string
}

func writeReport(c config, res *results) error {
	r, err := report.NewFromTemplate(c.Out, reportTmpl, c, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := view{C: c, Groups: experiment.Groups(res.Runs), MinSeeds: experiment.MinPairs(alpha), BLAS: gemm.Name()}
	for _, name := range c.Data {
		v.Data = append(v.Data, res.Data[name])
	}
	v.Epochs = float64(c.Steps*c.Batch) / float64(v.Data[0].Train.Len())
	v.Diverged, v.NRuns = experiment.DivergedRuns(res.Runs), len(res.Runs)
	if len(v.Diverged) > 0 {
		r.Describe("*.diverged", "runs of this data set and MLP stopped by a NaN or infinite loss, gradient or weight (written when some run diverged); the medians are over the others")
	}
	for _, g := range v.Groups {
		if len(g.Steps()) < 2 {
			v.NoLine = append(v.NoLine, g.Name)
		}
	}
	// Wall times differ between reruns: they go to timing.csv, outside the
	// report, and nowhere else.
	if err := experiment.WriteTiming(filepath.Join(c.Out, "timing.csv"), res.Runs); err != nil {
		return err
	}
	if err := claims(r, v); err != nil {
		return err
	}
	tables := map[string]func(*report.Report, view) error{"params": paramsTable, "results": resultsTable, "plot": plot}
	if err := r.ExecuteBlocks(reportTmpl, &v, map[string]func(...string) error{
		"table": func(name ...string) error { return tables[name[0]](r, v) },
	}); err != nil {
		return err
	}
	return r.Close()
}

func paramsTable(r *report.Report, v view) error {
	return transformer.WriteMLPTable(r, "params", v.C.MLPs, v.C.FF, func(mlp string) (train.Model, error) { return transformer.ViTModel(v.C.vit(mlp), 1, 1) })
}

func resultsTable(r *report.Report, v view) error {
	var rows [][]any
	for _, g := range v.Groups {
		for _, run := range g.Runs {
			rows = append(rows, []any{g.Setting.Data, g.Setting.MLP, run.Seed, run.UnlessDiverged(run.Curve.Last("train_loss")),
				run.UnlessDiverged(100 * run.Values["final_test_error"])})
		}
		k := g.Setting.String()
		if len(v.Diverged) > 0 {
			r.Set(k+".diverged", g.Diverged())
		}
		r.Set(k+".final_test_error", experiment.Median(g.Value("final_test_error")))
		r.Set(k+".final_train_loss", experiment.Median(g.Final("train_loss")))
	}
	return r.Table("results", []string{"data", "MLP", "seed", "final train loss", "test error (%)"}, rows)
}

// plot writes curves.csv and error.png: test error on the -eval-n images,
// median over seeds with the min–max band, per data set and MLP.
func plot(r *report.Report, v view) error {
	var runs []*runResult
	var series []report.Series
	for _, g := range v.Groups {
		runs = append(runs, g.Runs...)
		b := g.Band("test_error").Scale(100)
		if len(b.Steps) > 1 { // step 0 is chance level, far above the rest
			b = experiment.Band{Steps: b.Steps[1:], Median: b.Median[1:], Min: b.Min[1:], Max: b.Max[1:]}
		} else if len(v.Diverged) > 0 {
			continue // v.NoLine: every run diverged before a second evaluation
		}
		s := b.Series(g.Name, nil)
		s.Dashed = g.Setting.Data == "fashion"
		series = append(series, s)
	}
	if err := experiment.WriteCurves(r, "curves", runs, []string{"data", "mlp", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting.Data, run.Setting.MLP, run.Seed, step} }); err != nil {
		return err
	}
	if len(series) == 0 { // the template says why there is no plot
		return nil
	}
	caption, err := report.Render(reportTmpl, "error caption", v)
	if err != nil {
		return err
	}
	return r.Plot("error", report.PlotSpec{Title: "Test error vs step", XLabel: "step", YLabel: "test error (%)", Series: series, DPI: v.C.DPI, Caption: caption})
}

// claims checks "GELU's test error is below ReLU's in a vision
// Transformer" per data set with a paired sign test over seeds.
func claims(r *report.Report, v view) error {
	get := map[setting]*group{}
	for _, g := range v.Groups {
		get[g.Setting] = g
	}
	for _, d := range v.C.Data {
		gelu, relu := get[setting{d, "gelu"}], get[setting{d, "relu"}]
		if gelu == nil || relu == nil {
			continue
		}
		a, b := gelu.Value("final_test_error"), relu.Value("final_test_error")
		vs := experiment.CompareNamed("GELU", "ReLU", a, b, 100) // a diverged run's NaN is left out
		p := vs.Paired
		r.Set("compare."+d+".gelu_vs_relu.lower_seeds", p.Lower)
		r.Set("compare."+d+".gelu_vs_relu.p_value", p.P)
		m := map[string]any{"Data": dataNames[d], "GELU": vs.MA, "ReLU": vs.MB, "Seeds": len(a), "P": p, "Missing": vs.Missing()}
		if err := r.ClaimBlock(reportTmpl, "claim.gelu_relu", m, p.Verdict(alpha)); err != nil {
			return err
		}
	}
	return nil
}
