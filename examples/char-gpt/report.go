package main

// report.md (prose from report.md.tmpl), summary.json, tables, plot and
// the claims.

import (
	_ "embed"
	"fmt"
	"runtime"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl
var reportTemplate string

const alpha = 0.05

type group = experiment.Group[string]

// view is what report.md.tmpl sees.
type view struct {
	C                 config
	D                 data
	Groups            []*group
	Model             map[string]modelConfig
	Epochs, TrainSecs float64
	MinSeeds, Evals   int
	Samples           []sampleText
	BLAS              string
	CPUs, GOMAXPROCS  int
	Similar           string
}

type sampleText struct{ MLP, Text string }

// prose writes the template's text into the report, a block at a time:
// the template's table and plot calls flush the text before them.
type prose struct {
	r   *report.Report
	buf strings.Builder
}

func (p *prose) Write(b []byte) (int, error) { return p.buf.Write(b) }

func (p *prose) flush() string {
	if s := strings.TrimSpace(p.buf.String()); s != "" {
		p.r.Text(s)
	}
	p.buf.Reset()
	return ""
}

func writeReport(c config, res *results) error {
	r, err := report.New(c.Out, "A small character-level GPT: "+strings.Join(c.MLPs, " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := view{C: c, D: res.Data, Groups: experiment.Groups(res.Runs), Model: res.Model, MinSeeds: experiment.MinPairs(alpha),
		Epochs: float64(c.Steps*c.Batch) / float64(res.Data.Train.Len()), BLAS: gemm.Name(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	tables := map[string]func() error{"setup": func() error { return setupTable(r, v) }, "results": func() error { return resultsTable(r, v) },
		"samples": func() error { return samplesTable(r, &v) }}
	p := &prose{r: r}
	funcs := template.FuncMap{
		"f":     report.Format,
		"table": func(name string) (string, error) { p.flush(); return "", tables[name]() },
		"plot":  func() (string, error) { p.flush(); return "", plot(r, v) },
	}
	for _, g := range v.Groups {
		v.TrainSecs += sum(g.Runs)
		v.Evals = len(g.Runs[0].Curve.Steps)
	}
	claims(r, &v)
	t, err := template.New("report.md.tmpl").Funcs(funcs).Parse(reportTemplate)
	if err != nil {
		return err
	}
	if err := t.Execute(p, &v); err != nil {
		return err
	}
	p.flush()
	describe(r, v)
	return r.Close()
}

func sum(runs []*runResult) (secs float64) {
	for _, run := range runs {
		secs += run.StepSeconds
	}
	return secs
}

func setupTable(r *report.Report, v view) error {
	var rows [][]any
	for _, g := range v.Groups {
		mc := v.Model[g.Setting]
		kind := map[bool]string{false: "act(x·W1)·W2", true: "(act(x·W1) ⊙ x·V)·W2"}[mlpKinds[g.Setting].Gated]
		rows = append(rows, []any{g.Setting, kind, mlpKinds[g.Setting].Act.Name(), mc.hidden(), mc.params()})
		r.Set(g.Setting+".params", mc.params())
	}
	return r.Table("params", []string{"MLP", "form", "activation", "inner width", "parameters"}, rows)
}

func resultsTable(r *report.Report, v view) error {
	var rows [][]any
	for _, run := range flatten(v.Groups) {
		rows = append(rows, []any{run.Setting, run.Seed, run.Curve.Metric("val_bpc")[0], run.Curve.Last("train_bpc"), run.Curve.Last("val_bpc"),
			mean(run.Curve.Metric("val_bpc"))})
	}
	for _, g := range v.Groups {
		r.Set(g.Setting+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(g.Setting+".final_train_bpc", experiment.Median(g.Final("train_bpc")))
		r.Set(g.Setting+".mean_val_bpc", experiment.Median(g.Mean("val_bpc")))
		r.Set(g.Setting+".train_seconds", sum(g.Runs))
	}
	r.Set("train_seconds", v.TrainSecs)
	return r.Table("results", []string{"MLP", "seed", "initial val bits/char", "final train bits/char", "final val bits/char",
		"mean val bits/char over the run"}, rows)
}

// samplesTable writes samples.csv (the markdown shows the texts as code
// blocks, which keep their line breaks).
func samplesTable(r *report.Report, v *view) error {
	w, err := r.CSV("samples", "mlp", "seed", "text")
	if err != nil {
		return err
	}
	for _, g := range v.Groups {
		ids := make([]int, len(g.Runs[0].Vectors["sample"]))
		for i, id := range g.Runs[0].Vectors["sample"] {
			ids[i] = int(id)
		}
		text, err := v.D.Vocab.Decode(ids)
		if err != nil {
			return err
		}
		v.Samples = append(v.Samples, sampleText{g.Setting, strings.ReplaceAll(text, "```", "'''")})
		if err := w.Write(g.Setting, g.Runs[0].Seed, text); err != nil {
			return err
		}
	}
	return w.Close()
}

func flatten(gs []*group) (runs []*runResult) {
	for _, g := range gs {
		runs = append(runs, g.Runs...)
	}
	return runs
}

func mean(v []float64) (m float64) {
	for _, x := range v {
		m += x / float64(len(v))
	}
	return m
}

// plot writes curves.csv and loss.png: validation bits per character,
// median over seeds with the min–max band.
func plot(r *report.Report, v view) error {
	if err := experiment.WriteCurves(r, "curves", flatten(v.Groups), []string{"mlp", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting, run.Seed, step} }); err != nil {
		return err
	}
	var series []report.Series
	for _, g := range v.Groups {
		b := g.Band("val_bpc")
		if len(b.Steps) > 1 { // step 0 is the untrained model, far above the rest
			b = experiment.Band{Steps: b.Steps[1:], Median: b.Median[1:], Min: b.Min[1:], Max: b.Max[1:]}
		}
		s := b.Series(g.Setting, nil)
		s.Dashed = mlpKinds[g.Setting].Gated
		series = append(series, s)
	}
	return r.Plot("loss", report.PlotSpec{Title: "Validation loss vs step", XLabel: "step", YLabel: "bits per character", Series: series, DPI: v.C.DPI,
		Caption: "Median over seeds, shaded from the lowest to the highest seed; gated MLPs dashed. Step 0 (the untrained model) is left out."})
}

// claims checks the documents' claims with paired sign tests over seeds.
func claims(r *report.Report, v *view) {
	get := map[string]*group{}
	for _, g := range v.Groups {
		get[g.Setting] = g
	}
	final := func(g *group) []float64 { return g.Final("val_bpc") }
	area := func(g *group) []float64 { return g.Mean("val_bpc") }
	test := func(a, b, key string, f func(*group) []float64) (experiment.Paired, string, bool) {
		if get[a] == nil || get[b] == nil {
			return experiment.Paired{}, "", false
		}
		p := experiment.Compare(f(get[a]), f(get[b]))
		r.Set(fmt.Sprintf("compare.%s.%s_vs_%s.lower_seeds", key, a, b), p.Lower)
		r.Set(fmt.Sprintf("compare.%s.%s_vs_%s.p_value", key, a, b), p.P)
		return p, fmt.Sprintf("%s %s vs %s %s bits/char (medians); %s lower in %d of %d seeds (sign test p = %s)", a, report.Format(experiment.Median(f(get[a]))),
			b, report.Format(experiment.Median(f(get[b]))), a, p.Lower, p.N, report.Format(p.P)), true
	}
	if p, m, ok := test("gelu", "relu", "final_val_bpc", final); ok {
		r.Claim(report.Claim{Source: "doc 004 (tutorial)", Claim: "GELU consistently outperforms ReLU in NLP benchmarks (here: held-out bits per character)",
			Measured: "final validation loss: " + m, Verdict: p.Verdict(alpha)})
	}
	var parts []string
	verdict := report.Confirmed
	for _, other := range []string{"relu", "silu"} {
		if p, m, ok := test("gelu", other, "mean_val_bpc", area); ok {
			parts = append(parts, m)
			if w := p.Verdict(alpha); w == report.NotConfirmed || (w == report.Unclear && verdict == report.Confirmed) {
				verdict = w
			}
		}
	}
	if len(parts) > 0 {
		r.Claim(report.Claim{Source: "doc 001 (blog)", Claim: "models with GELU converge faster than with other activations",
			Measured: "mean validation loss over the run's evaluations (area under the curve): " + strings.Join(parts, "; "), Verdict: verdict})
	}
	for _, pair := range [][2]string{{"geglu", "gelu"}, {"swiglu", "silu"}, {"reglu", "relu"}} {
		if p, m, ok := test(pair[0], pair[1], "final_val_bpc", final); ok {
			r.Claim(report.Claim{Source: "Shazeer 2020, Table 1", Claim: fmt.Sprintf("the gated %s has lower held-out loss than the ungated %s at equal parameters", pair[0], pair[1]),
				Measured: m, Verdict: p.Verdict(alpha)})
		}
	}
	pg, mg, okg := test("geglu", "reglu", "final_val_bpc", final)
	ps, ms, oks := test("swiglu", "reglu", "final_val_bpc", final)
	if okg && oks {
		w := report.Unclear
		switch {
		case pg.Verdict(alpha) == report.NotConfirmed || ps.Verdict(alpha) == report.NotConfirmed:
			w = report.NotConfirmed
		case pg.Verdict(alpha) == report.Confirmed && ps.Verdict(alpha) == report.Confirmed:
			w = report.Confirmed
		}
		r.Claim(report.Claim{Source: "Shazeer 2020, Table 1", Claim: "GEGLU and SwiGLU both reach lower held-out loss than ReGLU", Measured: mg + "; " + ms, Verdict: w})
	}
	if p, m, ok := test("geglu", "swiglu", "final_val_bpc", final); ok && okg && oks {
		// "≈": no significant order either way, and a gap smaller than
		// half of the smaller gap to ReGLU.
		w := report.Unclear
		switch {
		case p.Verdict(alpha) != report.Unclear:
			w = report.NotConfirmed
		case p.N >= v.MinSeeds && abs(p.Mean) < min(abs(pg.Mean), abs(ps.Mean))/2:
			w = report.Confirmed
		}
		v.Similar = report.Format(abs(p.Mean))
		r.Claim(report.Claim{Source: "Shazeer 2020, Table 1", Claim: "GEGLU ≈ SwiGLU", Measured: m + fmt.Sprintf("; mean gap %s bits/char", v.Similar), Verdict: w})
	}
}

func abs(x float64) float64 { return max(x, -x) }

func describe(r *report.Report, v view) {
	for _, d := range [][2]string{
		{"*.params", "trainable parameters of the model with this MLP"},
		{"*.final_val_bpc", "validation loss (bits/char) of the final model on the scored windows: median over seeds"},
		{"*.final_train_bpc", "mean training minibatch loss (bits/char) over the last evaluation interval: median over seeds"},
		{"*.mean_val_bpc", "mean of the validation loss over the run's evaluations (area under the curve; lower: learned sooner): median over seeds"},
		{"*.train_seconds", "wall time of the training steps of all seeds, evaluations excluded; varies between runs"},
		{"train_seconds", "total wall time of the training steps of all runs; varies between runs"},
		{"compare.*.lower_seeds", "seeds in which the first MLP's value is lower than the second's"},
		{"compare.*.p_value", "one-sided sign test: probability of at least lower_seeds lower seeds by chance"},
	} {
		r.Describe(d[0], d[1])
	}
}
