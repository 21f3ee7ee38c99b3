package main

// report.md (its prose is report.md.tmpl), summary.json, the tables, the
// plot and the claims.

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
	C                config
	D                data
	Groups           []*group
	Model            map[string]modelConfig
	Params           map[string]int
	Epochs, Secs     float64
	MinSeeds, Evals  int
	Samples          map[string]string
	BLAS             string
	CPUs, GOMAXPROCS int
}

// prose collects the template's text; a table, plot or claim call in the
// template first adds the text so far to the report as one block.
type prose struct {
	r   *report.Report
	buf strings.Builder
}

func (p *prose) Write(b []byte) (int, error) { return p.buf.Write(b) }

func (p *prose) flush() {
	if s := strings.TrimSpace(p.buf.String()); s != "" {
		p.r.Text(s)
	}
	p.buf.Reset()
}

func writeReport(c config, res *results) error {
	r, err := report.New(c.Out, "A small character-level GPT: "+strings.Join(c.MLPs, " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := &view{C: c, D: res.Data, Groups: experiment.Groups(res.Runs), Model: res.Model, Params: res.Params, MinSeeds: experiment.MinPairs(alpha), Samples: map[string]string{},
		Epochs: float64(c.Steps*c.Batch) / float64(res.Data.Train.Len()), BLAS: gemm.Name(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	for _, g := range v.Groups {
		v.Evals = len(g.Runs[0].Curve.Steps)
		for _, run := range g.Runs {
			v.Secs += run.StepSeconds
		}
		r.Set(g.Setting+".params", v.Params[g.Setting])
		r.Set(g.Setting+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(g.Setting+".final_train_bpc", experiment.Median(g.Final("train_bpc")))
		r.Set(g.Setting+".mean_val_bpc", experiment.Median(g.Mean("val_bpc")))
	}
	r.Set("train_seconds", v.Secs)
	claims(r, v)
	p := &prose{r: r}
	do := func(f func() error) (string, error) { p.flush(); return "", f() }
	funcs := template.FuncMap{"f": report.Format,
		"table":    func(name string) (string, error) { return do(func() error { return tables[name](r, v) }) },
		"plot":     func() (string, error) { return do(func() error { return plot(r, v) }) },
		"describe": func(key, text string) (string, error) { return do(func() error { return r.Describe(key, text) }) },
	}
	t, err := template.New("report.md.tmpl").Funcs(funcs).Parse(reportTemplate)
	if err != nil {
		return err
	}
	if err := t.Execute(p, v); err != nil {
		return err
	}
	p.flush()
	return r.Close()
}

var tables = map[string]func(*report.Report, *view) error{
	"params": func(r *report.Report, v *view) error {
		var rows [][]any
		for _, g := range v.Groups {
			form := map[bool]string{false: "act(x·W1)·W2", true: "(act(x·W1) ⊙ x·V)·W2"}[mlpKinds[g.Setting].Gated()]
			rows = append(rows, []any{g.Setting, form, mlpKinds[g.Setting].Act.Name(), v.Model[g.Setting].hidden(), v.Params[g.Setting]})
		}
		return r.Table("params", []string{"MLP", "form", "activation", "inner width", "parameters"}, rows)
	},
	"results": func(r *report.Report, v *view) error {
		var rows [][]any
		for _, g := range v.Groups {
			for _, run := range g.Runs {
				c := run.Curve
				rows = append(rows, []any{g.Setting, run.Seed, c.Metric("val_bpc")[0], c.Last("train_bpc"), c.Last("val_bpc"), mean(c.Metric("val_bpc"))})
			}
		}
		return r.Table("results", []string{"MLP", "seed", "initial val bits/char", "final train bits/char", "final val bits/char", "mean val bits/char over the run"}, rows)
	},
	// samples writes samples.csv; the markdown shows the texts as code
	// blocks, which keep their line breaks.
	"samples": func(r *report.Report, v *view) (err error) {
		defer catch(&err)
		w := must(r.CSV("samples", "mlp", "seed", "text"))
		for _, g := range v.Groups {
			ids := make([]int, len(g.Runs[0].Vectors["sample"]))
			for i, id := range g.Runs[0].Vectors["sample"] {
				ids[i] = int(id)
			}
			text := must(v.D.Vocab.Decode(ids))
			must(0, w.Write(g.Setting, g.Runs[0].Seed, text))
			v.Samples[g.Setting] = strings.ReplaceAll(text, "```", "'''")
		}
		return w.Close()
	},
}

func mean(v []float64) (m float64) {
	for _, x := range v {
		m += x / float64(len(v))
	}
	return m
}

// plot writes curves.csv and loss.png: validation bits per character,
// median over seeds with the min–max band.
func plot(r *report.Report, v *view) error {
	var runs []*runResult
	var series []report.Series
	for _, g := range v.Groups {
		runs = append(runs, g.Runs...)
		b := g.Band("val_bpc") // without step 0, the untrained model, far above the rest
		s := experiment.Band{Steps: b.Steps[1:], Median: b.Median[1:], Min: b.Min[1:], Max: b.Max[1:]}.Series(g.Setting, nil)
		s.Dashed = mlpKinds[g.Setting].Gated()
		series = append(series, s)
	}
	if err := experiment.WriteCurves(r, "curves", runs, []string{"mlp", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting, run.Seed, step} }); err != nil {
		return err
	}
	return r.Plot("loss", report.PlotSpec{Title: "Validation loss vs step", XLabel: "step", YLabel: "bits per character", Series: series, DPI: v.C.DPI,
		Caption: "Median over seeds, shaded from the lowest to the highest seed; gated MLPs dashed. Step 0 (the untrained model) is left out."})
}

// claimSpecs are the claims "every MLP in A has a lower Metric than every
// MLP in B", checked when all of them ran.
var claimSpecs = []struct {
	Source, Claim, Metric string
	A, B                  []string
}{
	{"doc 004 (tutorial)", "GELU consistently outperforms ReLU in NLP benchmarks (here: held-out bits per character)", "final", []string{"gelu"}, []string{"relu"}},
	{"doc 001 (blog)", "models with GELU converge faster than with other activations (here: ReLU and SiLU)", "mean", []string{"gelu"}, []string{"relu", "silu"}},
	{shazeer, "the gated GEGLU has lower held-out loss than the ungated GELU at equal parameters", "final", []string{"geglu"}, []string{"gelu"}},
	{shazeer, "the gated SwiGLU has lower held-out loss than the ungated SiLU (Swish) at equal parameters", "final", []string{"swiglu"}, []string{"silu"}},
	{shazeer, "the gated ReGLU has lower held-out loss than the ungated ReLU at equal parameters", "final", []string{"reglu"}, []string{"relu"}},
	{shazeer, "GEGLU and SwiGLU both have lower held-out loss than ReGLU", "final", []string{"geglu", "swiglu"}, []string{"reglu"}},
}

const shazeer = "Shazeer 2020, Table 1"

var metrics = map[string]struct {
	what string
	of   func(*group) []float64
}{
	"final": {"final validation loss", func(g *group) []float64 { return g.Final("val_bpc") }},
	"mean":  {"mean validation loss over the run's evaluations (area under the curve)", func(g *group) []float64 { return g.Mean("val_bpc") }},
}

// claims checks claimSpecs and "GEGLU ≈ SwiGLU" with paired one-sided sign
// tests over seeds: a claim of several pairs is confirmed when every pair
// is, and not confirmed when any pair goes significantly the other way.
func claims(r *report.Report, v *view) {
	get := map[string]*group{}
	for _, g := range v.Groups {
		get[g.Setting] = g
	}
	test := func(a, b, metric string) (experiment.Paired, string) {
		m := metrics[metric].of
		p, k := experiment.Compare(m(get[a]), m(get[b])), fmt.Sprintf("compare.%s_val_bpc.%s_vs_%s.", metric, a, b)
		if _, done := r.Float(k + "p_value"); !done {
			r.Set(k+"lower_seeds", p.Lower)
			r.Set(k+"p_value", p.P)
		}
		return p, fmt.Sprintf("%s %s vs %s %s bits/char (medians), %s lower in %d of %d seeds (sign test p = %s)", a, report.Format(experiment.Median(m(get[a]))),
			b, report.Format(experiment.Median(m(get[b]))), a, p.Lower, p.N, report.Format(p.P))
	}
next:
	for _, s := range claimSpecs {
		var parts []string
		confirmed, refuted := true, false
		for _, a := range s.A {
			for _, b := range s.B {
				if get[a] == nil || get[b] == nil {
					continue next
				}
				p, text := test(a, b, s.Metric)
				parts = append(parts, text)
				confirmed, refuted = confirmed && p.Verdict(alpha) == report.Confirmed, refuted || p.Verdict(alpha) == report.NotConfirmed
			}
		}
		verdict := map[bool]report.Verdict{true: report.Confirmed, false: report.Unclear}[confirmed]
		if refuted {
			verdict = report.NotConfirmed
		}
		r.Claim(report.Claim{Source: s.Source, Claim: s.Claim, Measured: metrics[s.Metric].what + ": " + strings.Join(parts, "; "), Verdict: verdict})
	}
	if get["geglu"] == nil || get["swiglu"] == nil || get["reglu"] == nil {
		return
	}
	// "≈": neither significantly lower, and a mean gap under half of the
	// smaller of their gaps to ReGLU.
	p, text := test("geglu", "swiglu", "final")
	pg, _ := test("geglu", "reglu", "final")
	ps, _ := test("swiglu", "reglu", "final")
	verdict := report.Unclear
	switch {
	case p.Verdict(alpha) != report.Unclear:
		verdict = report.NotConfirmed
	case p.N >= v.MinSeeds && abs(p.Mean) < min(abs(pg.Mean), abs(ps.Mean))/2:
		verdict = report.Confirmed
	}
	r.Claim(report.Claim{Source: shazeer, Claim: "GEGLU ≈ SwiGLU in held-out loss", Verdict: verdict, Measured: fmt.Sprintf("final validation loss: %s; mean gap %s bits/char, vs %s (GEGLU) and %s (SwiGLU) to ReGLU",
		text, report.Format(p.Mean), report.Format(pg.Mean), report.Format(ps.Mean))})
}

func abs(x float64) float64 { return max(x, -x) }
