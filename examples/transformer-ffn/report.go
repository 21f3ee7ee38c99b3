package main

// report.md, summary.json, the tables and the plots.

import (
	_ "embed"
	"fmt"
	"math"
	"runtime"
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
	D                data
	S                shape
	Smooth, MinSeeds int
	Setup, Results   report.TableData
	Curves           string // curves.csv's link
	Loss, LossLate   report.PlotSpec
	Epochs           float64 // passes over the training windows
	Base             string  // the activation the others are compared with
	Comparison       report.TableData
	Diffs            []diff
	Rises            []rise
	Tokens, Secs     float64
	BLAS             string
	CPUs, Procs      int
	HalfStep         int // where the late validation plot starts
}

// TokensPerS is the training speed over all runs.
func (p *page) TokensPerS() float64 { return p.Tokens / p.Secs }

// diff is one activation's final validation loss against the first one's.
type diff struct {
	Name         string
	Delta, SE, Z float64 // nats/char
	Lower, N     int     // seeds where Name's loss is lower, of N
	P            float64 // one-sided sign test
	Along        alongTheWay
}

// rise is a run whose training loss climbed by more than 0.2 nats.
type rise struct {
	Act  string
	Seed uint64
	Rise float64
	At   int
}

func writeReport(c config, res *results) error {
	r, err := report.New(c.Out, "Transformer feed-forward blocks on characters: "+strings.ReplaceAll(c.Acts.String(), ",", " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	d, s := res.Data, res.Shape
	pg := &page{config: c, D: d, S: s, Smooth: smooth, MinSeeds: experiment.MinPairs(0.05), BLAS: gemm.Name(), CPUs: runtime.NumCPU(),
		Procs: runtime.GOMAXPROCS(0), Epochs: float64(c.Steps*c.Batch) / float64(d.Train.Len()), HalfStep: (c.Steps + 1) / 2}
	init, clip := "PyTorch-style default initialization from the seed", "no gradient clipping"
	if c.Init != "" {
		init = "loaded from " + c.Init
	}
	if c.Clip > 0 {
		clip = fmt.Sprintf("gradient norm clipped to %v", c.Clip)
	}
	pg.Setup = report.TableData{Header: []string{"setting", "value"}, Rows: [][]any{
		{"text", fmt.Sprintf("%s: %d characters, %d distinct", d.Name, d.Chars, s.Vocab)},
		{"split", fmt.Sprintf("chunks of %d characters, %.0f%% held out (seed %d); windows never cross a chunk", c.ChunkLen, 100*c.ValFraction, c.Seed)},
		{"training windows", d.Train.Len()},
		{"validation windows", fmt.Sprintf("%d held out, %d scored (a seeded sample)", d.Val.Len(), d.Eval.Len())},
		{"model", fmt.Sprintf("K=%d, e=%d, d=%d, d_ff=%d, L=%d: %d parameters (float32)", s.Context, s.Embed, s.Dim, s.Hidden, s.Layers, s.params())},
		{"initial weights", init},
		{"optimizer", fmt.Sprintf("SGD, momentum %v, peak lr %v, %d warmup steps, cosine decay to 0; %s", c.Momentum, c.LR, c.Warmup, clip)},
		{"training", fmt.Sprintf("%d steps of %d windows (%d characters predicted, %.2f epochs)", c.Steps, c.Batch, c.Steps*c.Batch, pg.Epochs)},
		{"evaluation", fmt.Sprintf("every %d steps and at the end; train loss = mean minibatch loss since the previous evaluation", c.EvalEvery)},
	}}
	pg.Results = report.TableData{Header: []string{"activation", "seed", "initial val loss", "final train loss", "final val loss", "val bits/char",
		"val accuracy", "largest rise of train loss", "at step", "train time (s)", "tokens/s"}}
	for _, run := range res.Runs {
		rise, at := maxRise(run.Vectors["step_loss"])
		pg.Results.Rows = append(pg.Results.Rows, []any{run.Setting.Name(), run.Seed, run.Curve.Metric("val_loss")[0], run.Curve.Last("train_loss"),
			run.Curve.Last("val_loss"), run.Curve.Last("val_bpc"), run.Curve.Last("val_accuracy"), rise, at, run.StepSeconds, tokensPerSec(c, run)})
	}
	for _, g := range experiment.Groups(res.Runs) {
		k := key(g.Setting)
		r.Set(k+".initial_val_loss", experiment.Median(initial(g)))
		r.Set(k+".final_train_loss", experiment.Median(g.Final("train_loss")))
		r.Set(k+".final_train_bpc", bits(experiment.Median(g.Final("train_loss"))))
		r.Set(k+".final_val_loss", experiment.Median(g.Final("val_loss")))
		r.Set(k+".final_val_bpc", experiment.Median(g.Final("val_bpc")))
		r.Set(k+".final_val_accuracy", experiment.Median(g.Final("val_accuracy")))
		rise, at := -1.0, 0
		for _, run := range g.Runs {
			if x, s := maxRise(run.Vectors["step_loss"]); x > rise {
				rise, at = x, s
			}
		}
		r.Set(k+".train_loss_max_rise", rise)
		r.Set(k+".train_loss_max_rise_step", at)
		secs, tokens := speedOf(c, g.Runs)
		r.Set(k+".train_seconds", secs)
		r.Set(k+".tokens_per_s", tokens/secs)
	}
	if err := curves(r, c, res, pg); err != nil {
		return err
	}
	comparison(r, c, res, pg)
	pg.Secs, pg.Tokens = speedOf(c, res.Runs)
	r.Set("tokens_per_s", pg.Tokens/pg.Secs)
	r.Set("train_seconds", pg.Secs)
	if err := r.Execute(reportTmpl, pg); err != nil {
		return err
	}
	r.DescribeKeys(keysText)
	for k, v := range map[string]int{"data.chars": d.Chars, "data.vocab": s.Vocab, "data.train_windows": d.Train.Len(),
		"data.val_windows": d.Val.Len(), "data.eval_windows": d.Eval.Len(), "model.params": s.params()} {
		r.Set(k, v)
	}
	return r.Close()
}

// initial returns each seed's validation loss at step 0.
func initial(g *experiment.Group[activation.Activation]) []float64 {
	var v []float64
	for _, run := range g.Runs {
		v = append(v, run.Curve.Metric("val_loss")[0])
	}
	return v
}

// trailing returns the mean of the last smooth training losses at each
// step from the smooth-th on.
func trailing(losses []float64) experiment.Band {
	var b experiment.Band
	k := min(smooth, len(losses))
	for i := k - 1; i < len(losses); i++ {
		var sum float64
		for _, l := range losses[i+1-k : i+1] {
			sum += l
		}
		b.Steps, b.Median = append(b.Steps, i+1), append(b.Median, sum/float64(k))
	}
	b.Min, b.Max = b.Median, b.Median
	return b
}

// maxRise returns the largest rise of the trailing mean training loss above
// its running minimum, and the step where it peaked.
func maxRise(losses []float64) (rise float64, at int) {
	t, low := trailing(losses), math.Inf(1)
	for i, m := range t.Median {
		if low = math.Min(low, m); m-low > rise {
			rise, at = m-low, t.Steps[i]
		}
	}
	return rise, at
}

func speedOf(c config, runs []*runResult) (secs, tokens float64) {
	for _, run := range runs {
		secs += run.StepSeconds
		tokens += float64(run.Steps * c.Batch)
	}
	return secs, tokens
}

func tokensPerSec(c config, run *runResult) float64 {
	s, t := speedOf(c, []*runResult{run})
	return t / s
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
		var ys [][]float64
		for _, run := range g.Runs {
			ys = append(ys, trailing(run.Vectors["step_loss"]).Median)
		}
		q, err := report.Quantiles(ys, 0, 0.5, 1)
		if err != nil {
			return err
		}
		tr := experiment.Band{Steps: trailing(g.Runs[0].Vectors["step_loss"]).Steps, Min: q[0], Median: q[1], Max: q[2]}
		vb := g.Band("val_loss")
		va := vb.Series(g.Name+" validation", nil)
		va.Dashed = true
		train, val = append(train, tr.Series(g.Name+" train", nil)), append(val, va)
		for i, step := range vb.Steps {
			if 2*step >= c.Steps {
				vb = experiment.Band{Steps: vb.Steps[i:], Median: vb.Median[i:], Min: vb.Min[i:], Max: vb.Max[i:]}
				break
			}
		}
		late = append(late, vb.Series(g.Name, nil))
	}
	pg.Loss = report.PlotSpec{Title: "Loss vs step", XLabel: "step", YLabel: "cross-entropy (nats/char)", Series: append(train, val...), DPI: c.DPI}
	pg.LossLate = report.PlotSpec{Title: "Validation loss, second half of training", XLabel: "step", YLabel: "cross-entropy (nats/char)", Series: late, DPI: c.DPI}
	return nil
}

// comparison compares each activation's final validation loss with the
// first one's: per seed on the same windows, with the evaluation noise, and
// over seeds.
func comparison(r *report.Report, c config, res *results, pg *page) {
	gs := experiment.Groups(res.Runs)
	if len(gs) < 2 {
		return
	}
	base := gs[0]
	pg.Base = base.Name
	pg.Comparison.Header = []string{"difference", "seed", "Δ final val loss (nats)", "Δ bits/char", "standard error (nats)", "z"}
	for _, g := range gs[1:] {
		var deltas, ses []float64
		for i, run := range g.Runs {
			a, b := run.Vectors["val_rows"], base.Runs[i].Vectors["val_rows"]
			diffs := make([]float64, len(a))
			for j := range diffs {
				diffs[j] = a[j] - b[j]
			}
			delta, se := experiment.Summarize(diffs).Mean, experiment.BlockSE(diffs, 32)
			deltas, ses = append(deltas, delta), append(ses, se)
			pg.Comparison.Rows = append(pg.Comparison.Rows, []any{g.Name + " − " + base.Name, run.Seed, delta, bits(delta), se, delta / se})
		}
		sum, p := experiment.Summarize(deltas), experiment.Compare(g.Final("val_loss"), base.Final("val_loss"))
		d := diff{Name: g.Name, Delta: sum.Mean, SE: sum.SE, Lower: p.Lower, N: p.N, P: p.P, Along: along(base, g)}
		if c.Seeds == 1 {
			d.SE = ses[0]
		}
		d.Z = d.Delta / d.SE
		r.Set(g.Name+".delta_val_loss", d.Delta)
		r.Set(g.Name+".delta_val_loss_se", d.SE)
		r.Set(g.Name+".lower_seeds", p.Lower)
		r.Set(g.Name+".p_value", p.P)
		pg.Diffs = append(pg.Diffs, d)
	}
	for _, run := range res.Runs {
		if x, at := maxRise(run.Vectors["step_loss"]); x > 0.2 {
			pg.Rises = append(pg.Rises, rise{run.Setting.Name(), run.Seed, x, at})
		}
	}
}

// Clear reports whether the difference is two standard errors or more
// from zero.
func (d diff) Clear() bool { return math.Abs(d.Z) >= 2 }

// AbsZ is |Z|.
func (d diff) AbsZ() float64 { return math.Abs(d.Z) }

// Bits is the difference and its standard error in bits per character.
func (d diff) Bits() string { return report.FormatPM(bits(d.Delta), bits(d.SE)) }

// Better is the activation with the lower loss: d's or base's.
func (d diff) Better(base string) string {
	if d.Delta > 0 {
		return base
	}
	return d.Name
}

// alongTheWay compares two median validation curves before the end: a
// difference in speed of learning need not survive to the end.
type alongTheWay struct {
	Lower, N int     // evaluations where the activation's median is below base's, of N
	Gap      float64 // the largest difference, at step At
	At       int
}

func along(base, g *experiment.Group[activation.Activation]) (w alongTheWay) {
	a, b := g.Band("val_loss"), base.Band("val_loss")
	for i, step := range a.Steps {
		if step == 0 || i >= len(b.Steps) || b.Steps[i] != step {
			continue
		}
		d := a.Median[i] - b.Median[i]
		w.N++
		if d < 0 {
			w.Lower++
		}
		if math.Abs(d) > math.Abs(w.Gap) {
			w.Gap, w.At = d, step
		}
	}
	return w
}
