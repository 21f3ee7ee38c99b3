package main

// report.md (prose from report.md.tmpl), summary.json, tables, plot and
// the claim.

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

type group = experiment.Group[setting]

// view is what report.md.tmpl sees.
type view struct {
	C                config
	Data             []data
	Groups           []*group
	TrainSecs        float64
	MinSeeds         int
	BLAS             string
	CPUs, GOMAXPROCS int
	Epochs           float64
	Params           map[string]int
}

// prose writes the template's text into the report, a block at a time:
// the template's table and plot calls flush the text before them.
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
	r, err := report.New(c.Out, "A small vision Transformer on MNIST: "+strings.Join(c.MLPs, " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	v := view{C: c, Groups: experiment.Groups(res.Runs), MinSeeds: experiment.MinPairs(alpha), BLAS: gemm.Name(),
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Params: map[string]int{}}
	for _, name := range c.Data {
		v.Data = append(v.Data, res.Data[name])
	}
	v.Epochs = float64(c.Steps*c.Batch) / float64(v.Data[0].Train.Len())
	for _, g := range v.Groups {
		for _, run := range g.Runs {
			v.TrainSecs += run.StepSeconds
		}
	}
	r.Set("train_seconds", v.TrainSecs)
	tables := map[string]func() error{"params": func() error { return paramsTable(r, &v) }, "results": func() error { return resultsTable(r, v) },
		"plot": func() error { return plot(r, v) }}
	p := &prose{r: r}
	funcs := template.FuncMap{"f": report.Format,
		"table":    func(name string) (string, error) { p.flush(); return "", tables[name]() },
		"describe": func(key, text string) (string, error) { p.flush(); return "", r.Describe(key, text) },
	}
	claims(r, v)
	t, err := template.New("report.md.tmpl").Funcs(funcs).Parse(reportTemplate)
	if err != nil {
		return err
	}
	if err := t.Execute(p, &v); err != nil {
		return err
	}
	p.flush()
	return r.Close()
}

func paramsTable(r *report.Report, v *view) error {
	var rows [][]any
	for _, m := range v.C.MLPs {
		mc := v.C.model(m)
		n, err := countParams(mc)
		if err != nil {
			return err
		}
		kind := map[bool]string{false: "act(x·W1)·W2", true: "(act(x·W1) ⊙ x·V)·W2"}[mlpKinds[m].Gated()]
		rows = append(rows, []any{m, kind, mlpKinds[m].Act.Name(), mc.hidden(), n})
		r.Set(m+".params", n)
	}
	return r.Table("params", []string{"MLP", "form", "activation", "inner width", "parameters"}, rows)
}

func resultsTable(r *report.Report, v view) error {
	var rows [][]any
	for _, g := range v.Groups {
		for _, run := range g.Runs {
			rows = append(rows, []any{g.Setting.Data, g.Setting.MLP, run.Seed, run.Curve.Last("train_loss"), 100 * run.Values["final_test_error"]})
		}
		k := g.Setting.String()
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
		}
		s := b.Series(g.Name, nil)
		s.Dashed = g.Setting.Data == "fashion"
		series = append(series, s)
	}
	if err := experiment.WriteCurves(r, "curves", runs, []string{"data", "mlp", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting.Data, run.Setting.MLP, run.Seed, step} }); err != nil {
		return err
	}
	return r.Plot("error", report.PlotSpec{Title: "Test error vs step", XLabel: "step", YLabel: "test error (%)", Series: series, DPI: v.C.DPI,
		Caption: fmt.Sprintf("Error on %d test images per data set, median over seeds, shaded from the lowest to the highest seed; Fashion-MNIST dashed. Step 0 (chance) is left out.", v.C.EvalN)})
}

// claims checks "GELU's test error is below ReLU's in a vision
// Transformer" per data set with a paired sign test over seeds.
func claims(r *report.Report, v view) {
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
		p := experiment.Compare(a, b)
		r.Set("compare."+d+".gelu_vs_relu.lower_seeds", p.Lower)
		r.Set("compare."+d+".gelu_vs_relu.p_value", p.P)
		r.Claim(report.Claim{Source: "project claim list (vision Transformers)", Claim: "GELU's test error is below ReLU's in a vision Transformer (" + dataNames[d] + ")",
			Measured: fmt.Sprintf("final test error (%%): GELU %s vs ReLU %s (medians over %d seeds); GELU lower in %d of %d seeds (sign test p = %s)",
				report.Format(100*experiment.Median(a)), report.Format(100*experiment.Median(b)), len(a), p.Lower, p.N, report.Format(p.P)),
			Verdict: p.Verdict(alpha)})
	}
}
