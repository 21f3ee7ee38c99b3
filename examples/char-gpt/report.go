package main

// report.md (its prose, the claims' words included, is report.md.tmpl),
// summary.json, the tables, the plot and the claims.

import (
	_ "embed"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportText string

var reportTmpl = template.Must(report.ParseBlocks("report.md.tmpl", reportText, "table", "plot"))

const alpha = 0.05

type group = experiment.Group[string]

// view is what report.md.tmpl sees.
type view struct {
	C               config
	D               data
	Groups          []*group
	Epochs          float64
	MinSeeds, Evals int
	Samples         map[string]string
	experiment.Speed
	// Diverged are the runs stopped by a NaN or infinite value, of NRuns;
	// NoLine the MLPs without a line in the plot (every run diverged
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
	v := &view{C: c, D: res.Data, Groups: experiment.Groups(res.Runs), MinSeeds: experiment.MinPairs(alpha), Samples: map[string]string{},
		Epochs: float64(c.Steps*c.Batch) / float64(res.Data.Train.Len()), Speed: experiment.SpeedOf(res.Runs)}
	v.Diverged, v.NRuns = experiment.DivergedRuns(res.Runs), len(res.Runs)
	if len(v.Diverged) > 0 {
		r.Describe("*.diverged", "runs of this MLP stopped by a NaN or infinite loss, gradient or weight (written when some run diverged); the medians are over the others")
	}
	for _, g := range v.Groups {
		v.Evals = max(v.Evals, len(g.Steps()))
		r.Set(g.Setting+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(g.Setting+".final_train_bpc", experiment.Median(g.Final("train_bpc")))
		r.Set(g.Setting+".mean_val_bpc", experiment.Median(g.Mean("val_bpc")))
		if len(v.Diverged) > 0 {
			r.Set(g.Setting+".diverged", g.Diverged())
		}
		if len(g.Steps()) < 2 {
			v.NoLine = append(v.NoLine, g.Setting)
		}
	}
	r.Set("train_seconds", v.StepSeconds)
	if err := claims(r, v); err != nil {
		return err
	}
	tables := map[string]func(*report.Report, *view) error{"params": paramsTable, "results": resultsTable, "samples": samplesTable}
	if err := r.ExecuteBlocks(reportTmpl, v, map[string]func(...string) error{
		"table": func(name ...string) error { return tables[name[0]](r, v) },
		"plot":  func(...string) error { return plot(r, v) },
	}); err != nil {
		return err
	}
	return r.Close()
}

func paramsTable(r *report.Report, v *view) error {
	return transformer.WriteMLPTable(r, "params", v.C.MLPs, v.C.FF, func(mlp string) (train.Model, error) {
		m, _, err := transformer.GPTModel(v.C.gpt(v.D.Vocab.Size(), mlp), 1, 1)
		return m, err
	})
}

func resultsTable(r *report.Report, v *view) error {
	var rows [][]any
	for _, g := range v.Groups {
		for i, run := range g.Runs {
			c := run.Curve
			rows = append(rows, []any{g.Setting, run.Seed, c.Metric("val_bpc")[0], run.UnlessDiverged(c.Last("train_bpc")),
				run.UnlessDiverged(c.Last("val_bpc")), run.UnlessDiverged(g.Mean("val_bpc")[i])})
		}
	}
	return r.Table("results", []string{"MLP", "seed", "initial val bits/char", "final train bits/char", "final val bits/char", "mean val bits/char over the run"}, rows)
}

// samplesTable writes samples.csv; the template shows the texts as code blocks,
// which keep their line breaks.
func samplesTable(r *report.Report, v *view) error {
	w, err := r.CSV("samples", "mlp", "seed", "text")
	if err != nil {
		return err
	}
	for _, g := range v.Groups {
		text, err := v.D.Vocab.Decode(experiment.Convert[int](g.Runs[0].Vectors["sample"])) // none if the run diverged
		if err == nil {
			err = w.Write(g.Setting, g.Runs[0].Seed, text)
		}
		if err != nil {
			return err
		}
		v.Samples[g.Setting] = strings.ReplaceAll(text, "```", "'''")
		if g.Runs[0].Diverged != "" {
			v.Samples[g.Setting] = fmt.Sprintf("(no sample: the run diverged at step %d)", g.Runs[0].DivergedStep())
		}
	}
	return w.Close()
}

// plot writes curves.csv and loss.png: validation bits per character,
// median over seeds with the min–max band.
func plot(r *report.Report, v *view) error {
	var runs []*runResult
	var series []report.Series
	for _, g := range v.Groups {
		runs = append(runs, g.Runs...)
		b := g.Band("val_bpc") // without step 0, the untrained model, far above the rest
		if len(b.Steps) < 2 {
			continue // v.NoLine
		}
		s := experiment.Band{Steps: b.Steps[1:], Median: b.Median[1:], Min: b.Min[1:], Max: b.Max[1:]}.Series(g.Setting, nil)
		s.Dashed = transformer.MLPs[g.Setting].Gated()
		series = append(series, s)
	}
	if err := experiment.WriteCurves(r, "curves", runs, []string{"mlp", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting, run.Seed, step} }); err != nil {
		return err
	}
	if len(series) == 0 { // the template says why there is no plot
		return nil
	}
	caption, err := report.Render(reportTmpl, "loss caption", v)
	if err != nil {
		return err
	}
	return r.Plot("loss", report.PlotSpec{Title: "Validation loss vs step", XLabel: "step", YLabel: "bits per character", Series: series, DPI: v.C.DPI, Caption: caption})
}

// claimSpecs are the claims "every MLP in A has a lower Metric than every
// MLP in B", checked when all of them ran; the template "claim.<ID>" says
// what was claimed, by whom, and what was measured.
var claimSpecs = []struct {
	ID, Metric string
	A, B       []string
}{
	{"gelu_relu", "final", []string{"gelu"}, []string{"relu"}},
	{"faster", "mean", []string{"gelu"}, []string{"relu", "silu"}},
	{"geglu_gelu", "final", []string{"geglu"}, []string{"gelu"}},
	{"swiglu_silu", "final", []string{"swiglu"}, []string{"silu"}},
	{"reglu_relu", "final", []string{"reglu"}, []string{"relu"}},
	{"gated_reglu", "final", []string{"geglu", "swiglu"}, []string{"reglu"}},
}

// claims checks claimSpecs and "GEGLU ≈ SwiGLU" with paired one-sided sign
// tests over seeds (experiment.AllLower); the templates "claim.…" say what
// was claimed, by whom, and what was measured.
func claims(r *report.Report, v *view) error {
	get := map[string]*group{}
	for _, g := range v.Groups {
		get[g.Setting] = g
	}
	values := func(metric string) func(string) []float64 {
		return func(name string) []float64 {
			if get[name] == nil {
				return nil
			}
			return map[string]func(*group, string) []float64{"final": (*group).Final, "mean": (*group).Mean}[metric](get[name], "val_bpc")
		}
	}
	done := func(key string) bool { _, ok := r.Float(key); return ok }
	set := func(metric string, pairs ...experiment.Versus) {
		for _, p := range pairs {
			if k := "compare." + metric + "_val_bpc." + p.A + "_vs_" + p.B + "."; !done(k + "p_value") {
				r.Set(k+"lower_seeds", p.Lower)
				r.Set(k+"p_value", p.P)
			}
		}
	}
	for _, s := range claimSpecs {
		pairs, verdict, ok := experiment.AllLower(s.A, s.B, values(s.Metric), alpha)
		if set(s.Metric, pairs...); !ok {
			continue
		}
		if err := r.ClaimBlock(reportTmpl, "claim."+s.ID, map[string]any{"Metric": s.Metric, "Pairs": pairs}, verdict); err != nil {
			return err
		}
	}
	if get["geglu"] == nil || get["swiglu"] == nil || get["reglu"] == nil {
		return nil
	}
	// "≈": neither significantly lower, and a mean gap under half of the
	// smaller of their gaps to ReGLU.
	final := values("final")
	p := experiment.CompareNamed("geglu", "swiglu", final("geglu"), final("swiglu"), 1)
	pg := experiment.CompareNamed("geglu", "reglu", final("geglu"), final("reglu"), 1)
	ps := experiment.CompareNamed("swiglu", "reglu", final("swiglu"), final("reglu"), 1)
	set("final", p, pg, ps)
	verdict := report.Unclear
	switch {
	case p.Verdict(alpha) != report.Unclear:
		verdict = report.NotConfirmed
	case p.N >= v.MinSeeds && abs(p.Mean) < min(abs(pg.Mean), abs(ps.Mean))/2:
		verdict = report.Confirmed
	}
	return r.ClaimBlock(reportTmpl, "claim.approx", map[string]experiment.Versus{"GS": p, "GR": pg, "SR": ps}, verdict)
}

func abs(x float64) float64 { return max(x, -x) }
