package main

// report.md (its prose, the claims' words included, is report.md.tmpl),
// summary.json, the tables, the plot, the claims and timing.csv.

import (
	"cmp"
	_ "embed"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportText string

var reportTmpl = template.Must(report.ParseBlocks("report.md.tmpl", reportText, "table", "plot"))

const alpha = 0.05

// view is what report.md.tmpl sees.
type view struct {
	C               config
	D               data
	Groups          []*group // per MLP, its runs at the chosen rate, in -mlp order
	FF              int      // the ungated MLPs' inner width
	Tokens          int      // characters predicted per step (batch × T)
	Epochs          float64  // passes over the training characters
	MinSeeds, Evals int
	Edge            []string // "relu: 0.03, the largest": the MLPs whose chosen rate is the smallest or largest of several
	Samples         map[string]string
	BLAS            string // gemm.Name: the results are bit for bit the same on the same BLAS
	// Diverged are the runs stopped by a NaN or infinite value, of NRuns;
	// NoLine the MLPs without a line in the plot (every run diverged
	// before its first evaluation after step 0).
	Diverged []*runResult
	NRuns    int
	NoLine   []string
	All      []*runResult // both grids' runs
}

// Beta1 is AdamW's β1 (nanoGPT's train.py default, not a flag here).
func (v *view) Beta1() float64 { return 0.9 }

// LastSeed is the last of the seeds.
func (v *view) LastSeed() uint64 { return v.C.Seed + uint64(v.C.Seeds) - 1 }

// LRNames are the rates of -lrs as the folders name them.
func (v *view) LRNames() []string {
	var s []string
	for _, lr := range v.C.LRs {
		s = append(s, fmt.Sprint(lr))
	}
	return s
}

// Baby reports whether the model and its training are nanoGPT's CPU
// recipe for its Shakespeare baby GPT (the -full settings).
func (v *view) Baby() bool {
	c := v.C
	return c.T == 64 && c.Batch == 12 && c.Blocks == 4 && c.Heads == 4 && c.DModel == 128 && v.FF == 512 && c.Steps == 2000
}

func writeReport(c config, res *results) error {
	r, err := report.NewFromTemplate(c.Out, reportTmpl, c, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := &view{C: c, D: res.Data, Groups: experiment.Groups(res.Runs), FF: cmp.Or(c.FF, 4*c.DModel), Tokens: c.Batch * c.T,
		MinSeeds: experiment.MinPairs(alpha), Samples: map[string]string{}, BLAS: gemm.Name(), All: res.All}
	v.Epochs = float64(c.Steps*v.Tokens) / float64(len(res.Data.Train))
	v.Diverged, v.NRuns = experiment.DivergedRuns(res.Runs), len(res.Runs)
	if len(v.Diverged) > 0 {
		r.Describe("*.diverged", "runs of this MLP stopped by a NaN or infinite loss, gradient or weight (written when some run diverged); the medians are over the others")
	}
	for _, g := range v.Groups {
		mlp := g.Setting.MLP
		v.Evals = max(v.Evals, len(g.Steps()))
		r.Set(mlp+".lr", g.Setting.LR)
		r.Set(mlp+".final_val_loss", experiment.Median(g.Final("val_loss")))
		r.Set(mlp+".final_val_bpc", experiment.Median(g.Final("val_loss"))/math.Ln2)
		r.Set(mlp+".final_train_loss", experiment.Median(g.Final("train_loss")))
		r.Set(mlp+".mean_val_loss", experiment.Median(g.Mean("val_loss")))
		if len(v.Diverged) > 0 {
			r.Set(mlp+".diverged", g.Diverged())
		}
		if len(g.Steps()) < 2 {
			v.NoLine = append(v.NoLine, mlp)
		}
		if lr := g.Setting.LR; len(c.LRs) > 1 && (lr == slices.Min(c.LRs) || lr == slices.Max(c.LRs)) {
			v.Edge = append(v.Edge, fmt.Sprintf("%s: %v, the %s", mlp, lr, map[bool]string{true: "smallest", false: "largest"}[lr == slices.Min(c.LRs)]))
		}
	}
	// Wall times differ between reruns: they go to timing.csv, outside the
	// report, and nowhere else.
	if err := experiment.WriteTiming(filepath.Join(c.Out, "timing.csv"), res.All); err != nil {
		return err
	}
	if err := claims(r, v); err != nil {
		return err
	}
	tables := map[string]func(*report.Report, *view, *results) error{"params": paramsTable, "select": selectTable, "summary": summaryTable,
		"results": resultsTable, "samples": samplesTable}
	if err := r.ExecuteBlocks(reportTmpl, v, map[string]func(...string) error{
		"table": func(name ...string) error { return tables[name[0]](r, v, res) },
		"plot":  func(...string) error { return plot(r, v) },
	}); err != nil {
		return err
	}
	return r.Close()
}

func paramsTable(r *report.Report, v *view, _ *results) error {
	return transformer.WriteMLPTable(r, "params", v.C.MLPs, v.FF, func(mlp string) (train.Model, error) {
		m, _, err := v.C.gpt(v.D.Vocab.Size(), mlp, 1, 1)
		return m, err
	})
}

// selectTable writes the learning-rate selection: every MLP at every rate
// with the first seed, and which rate was chosen.
func selectTable(r *report.Report, v *view, res *results) error {
	var rows [][]any
	for _, g := range res.Select {
		run := g.Runs[0]
		loss := run.UnlessDiverged(run.Curve.Last("val_loss"))
		bpc := run.UnlessDiverged(run.Curve.Last("val_loss") / math.Ln2)
		rows = append(rows, []any{g.Setting.MLP, fmt.Sprint(g.Setting.LR), loss, bpc, slices.Contains(res.Chosen, g)})
	}
	return r.Table("lr_selection", []string{"MLP", "lr", "final val loss (nats)", "final val bits/char", "chosen"}, rows)
}

// summaryTable writes each MLP's results at its chosen rate: medians over
// seeds and their ranges.
func summaryTable(r *report.Report, v *view, _ *results) error {
	var rows [][]any
	for _, g := range v.Groups {
		final := experiment.Summarize(g.Final("val_loss"))
		rows = append(rows, []any{g.Setting.MLP, fmt.Sprint(g.Setting.LR), final.Median, final.Range(1), final.Median / math.Ln2,
			experiment.Median(g.Mean("val_loss")), g.Diverged()})
	}
	return r.Table("summary", []string{"MLP", "lr", "final val loss (nats), median", "min–max", "bits/char, median",
		"mean val loss over the run, median", "diverged runs"}, rows)
}

func resultsTable(r *report.Report, v *view, _ *results) error {
	var rows [][]any
	for _, g := range v.Groups {
		for i, run := range g.Runs {
			c := run.Curve
			rows = append(rows, []any{g.Setting.MLP, fmt.Sprint(g.Setting.LR), run.Seed, c.Metric("val_loss")[0], run.UnlessDiverged(c.Last("train_loss")),
				run.UnlessDiverged(c.Last("val_loss")), run.UnlessDiverged(c.Last("val_loss") / math.Ln2), run.UnlessDiverged(g.Mean("val_loss")[i])})
		}
	}
	return r.Table("results", []string{"MLP", "lr", "seed", "initial val loss", "final train loss", "final val loss", "final val bits/char",
		"mean val loss over the run"}, rows)
}

// samplesTable writes samples.csv; the template shows the texts as code
// blocks, which keep their line breaks.
func samplesTable(r *report.Report, v *view, _ *results) error {
	w, err := r.CSV("samples", "mlp", "seed", "text")
	if err != nil {
		return err
	}
	for _, g := range v.Groups {
		mlp, first := g.Setting.MLP, g.Runs[0]
		text, err := v.D.Vocab.Decode(experiment.Convert[int](first.Vectors["sample"])) // none if the run diverged
		if err == nil {
			err = w.Write(mlp, first.Seed, text)
		}
		if err != nil {
			return err
		}
		v.Samples[mlp] = strings.ReplaceAll(text, "```", "'''")
		if first.Diverged != "" {
			v.Samples[mlp] = fmt.Sprintf("(no sample: the run diverged at step %d)", first.DivergedStep())
		}
	}
	return w.Close()
}

// plot writes curves.csv and loss.png: the validation loss, median over
// seeds with the min–max band.
func plot(r *report.Report, v *view) error {
	var runs []*runResult
	var series []report.Series
	for _, g := range v.Groups {
		runs = append(runs, g.Runs...)
		b := g.Band("val_loss") // without step 0, the untrained model, far above the rest
		if len(b.Steps) < 2 {
			continue // v.NoLine
		}
		s := experiment.Band{Steps: b.Steps[1:], Median: b.Median[1:], Min: b.Min[1:], Max: b.Max[1:]}.Series(g.Setting.MLP, nil)
		m, _ := transformer.ParseMLP(g.Setting.MLP)
		s.Dashed = m.Gated()
		series = append(series, s)
	}
	if err := experiment.WriteCurves(r, "curves", runs, []string{"mlp", "lr", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting.MLP, run.Setting.LR, run.Seed, step} }); err != nil {
		return err
	}
	if len(series) == 0 { // the template says why there is no plot
		return nil
	}
	caption, err := report.Render(reportTmpl, "loss caption", v)
	if err != nil {
		return err
	}
	return r.Plot("loss", report.PlotSpec{Title: "Validation loss vs step", XLabel: "step", YLabel: "cross-entropy (nats per character)",
		Series: series, DPI: v.C.DPI, Caption: caption})
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
// tests over seeds (experiment.AllLower), each MLP at its chosen rate.
func claims(r *report.Report, v *view) error {
	get := map[string]*group{}
	for _, g := range v.Groups {
		get[g.Setting.MLP] = g
	}
	values := func(metric string) func(string) []float64 {
		return func(name string) []float64 {
			if get[name] == nil {
				return nil
			}
			return map[string]func(*group, string) []float64{"final": (*group).Final, "mean": (*group).Mean}[metric](get[name], "val_loss")
		}
	}
	done := func(key string) bool { _, ok := r.Float(key); return ok }
	set := func(metric string, pairs ...experiment.Versus) {
		for _, p := range pairs {
			if k := "compare." + metric + "_val_loss." + p.A + "_vs_" + p.B + "."; !done(k + "p_value") {
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
