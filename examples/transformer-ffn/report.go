package main

// report.md, summary.json, curves.csv and the plots.

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// key is the activation's name in summary keys and folder names.
func key(a ops.Activation) string { return strings.NewReplacer(":", "_", ".", "_").Replace(a.Name()) }

func bits(nats float64) float64 { return nats / math.Ln2 }

func writeReport(c config, res *results) error {
	r, err := report.New(c.Out, "Transformer feed-forward blocks on characters: "+names(res.Runs, " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	d, s := res.Data, res.Shape
	r.Text(fmt.Sprintf("A next-character model without attention: the previous %d characters are embedded (%d numbers each), "+
		"projected to width %d, passed through %d pre-LN Transformer feed-forward blocks x + fc2(act(fc1(LN(x)))) of inner width %d, "+
		"a final LayerNorm and a Linear to the %d characters of the vocabulary. Each activation is trained once, from the same "+
		"initial weights (seed %d) and on the same batches in the same order; only the activation differs.",
		s.Context, s.Embed, s.Dim, s.Layers, s.Hidden, s.Vocab, c.Seed))
	r.Section("Setup")
	init := "PyTorch-style default initialization from the seed"
	if c.Init != "" {
		init = "loaded from " + c.Init
	}
	clip := "no gradient clipping"
	if c.Clip > 0 {
		clip = fmt.Sprintf("gradient norm clipped to %v", c.Clip)
	}
	r.Table("setup", []string{"setting", "value"}, [][]any{
		{"text", fmt.Sprintf("%s: %d characters, %d distinct", d.Name, d.Chars, s.Vocab)},
		{"split", fmt.Sprintf("chunks of %d characters, %.0f%% held out (seed %d); windows never cross a chunk", c.ChunkLen, 100*c.ValFraction, c.Seed)},
		{"training windows", d.TrainLen},
		{"validation windows", fmt.Sprintf("%d held out, %d scored (a seeded sample)", d.ValLen, d.Eval.Len())},
		{"model", fmt.Sprintf("K=%d, e=%d, d=%d, d_ff=%d, L=%d: %d parameters (float32)", s.Context, s.Embed, s.Dim, s.Hidden, s.Layers, s.params())},
		{"initial weights", init},
		{"optimizer", fmt.Sprintf("SGD, momentum %v, peak lr %v, %d warmup steps, cosine decay to 0; %s", c.Momentum, c.LR, c.Warmup, clip)},
		{"training", fmt.Sprintf("%d steps of %d windows (%d characters predicted, %.2f epochs)", c.Steps, c.Batch, c.Steps*c.Batch, float64(c.Steps*c.Batch)/float64(d.TrainLen))},
		{"evaluation", fmt.Sprintf("every %d steps and at the end; train loss = mean minibatch loss since the previous evaluation", c.EvalEvery)},
	})
	r.Section("Results")
	rows := [][]any{}
	for _, run := range res.Runs {
		f := run.final()
		k := key(run.Act)
		rise, at := maxRise(run.Steps)
		rows = append(rows, []any{run.Act.Name(), run.Evals[0].ValLoss, f.TrainLoss, f.ValLoss, bits(f.ValLoss), f.ValAcc, rise, at, run.Seconds, run.tokensPerSec()})
		r.Set(k+".train_loss_max_rise", rise)
		r.Set(k+".train_loss_max_rise_step", at)
		r.Set(k+".initial_val_loss", run.Evals[0].ValLoss)
		r.Set(k+".final_train_loss", f.TrainLoss)
		r.Set(k+".final_train_bpc", bits(f.TrainLoss))
		r.Set(k+".final_val_loss", f.ValLoss)
		r.Set(k+".final_val_bpc", bits(f.ValLoss))
		r.Set(k+".final_val_accuracy", f.ValAcc)
		r.Set(k+".train_seconds", run.Seconds)
		r.Set(k+".tokens_per_s", run.tokensPerSec())
	}
	r.Table("results", []string{"activation", "initial val loss", "final train loss", "final val loss", "val bits/char", "val accuracy",
		"largest rise of train loss", "at step", "train time (s)", "tokens/s"}, rows)
	r.Text(fmt.Sprintf("Losses are cross-entropies in nats per character; bits per character = nats / ln 2. The largest rise is "+
		"how far the training loss (mean of %d steps) climbed above its lowest value so far, at the step where that rise peaked: a "+
		"sign of instability when it is large. In summary.json the keys of an activation start with its -acts name, ':' and '.' "+
		"replaced by '_'.", smooth))
	if err := curves(r, c, res); err != nil {
		return err
	}
	comparison(r, c, res)
	speed(r, res)
	describe(r)
	r.Set("data.chars", d.Chars)
	r.Set("data.vocab", s.Vocab)
	r.Set("data.train_windows", d.TrainLen)
	r.Set("data.val_windows", d.ValLen)
	r.Set("data.eval_windows", d.Eval.Len())
	r.Set("model.params", s.params())
	return r.Close()
}

func names(runs []runResult, sep string) string {
	var n []string
	for _, r := range runs {
		n = append(n, r.Act.Name())
	}
	return strings.Join(n, sep)
}

// smooth is the number of steps averaged in the plotted training loss.
const smooth = 10

// curves writes every evaluation to curves.csv and plots them.
func curves(r *report.Report, c config, res *results) error {
	w, err := r.CSV("curves", "activation", "step", "train_loss", "val_loss", "val_bpc", "val_accuracy")
	if err != nil {
		return err
	}
	var train, val, late []report.Series
	for _, run := range res.Runs {
		// Training: the trailing mean of the last smooth minibatch losses.
		tr := report.Series{Name: run.Act.Name() + " train"}
		k := min(smooth, len(run.Steps))
		for i := k - 1; i < len(run.Steps); i++ {
			tr.X, tr.Y = append(tr.X, float64(i+1)), append(tr.Y, mean(run.Steps[i+1-k:i+1]))
		}
		va := report.Series{Name: run.Act.Name() + " validation", Dashed: true}
		lt := report.Series{Name: run.Act.Name()}
		for _, e := range run.Evals {
			if err := w.Write(run.Act.Name(), e.Step, e.TrainLoss, e.ValLoss, bits(e.ValLoss), e.ValAcc); err != nil {
				return err
			}
			va.X, va.Y = append(va.X, float64(e.Step)), append(va.Y, e.ValLoss)
			if 2*e.Step >= c.Steps {
				lt.X, lt.Y = append(lt.X, float64(e.Step)), append(lt.Y, e.ValLoss)
			}
		}
		train, val, late = append(train, tr), append(val, va), append(late, lt)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := r.Plot("loss", report.PlotSpec{Title: "Loss vs step", XLabel: "step", YLabel: "cross-entropy (nats/char)",
		Series: append(train, val...), DPI: c.DPI,
		Caption: fmt.Sprintf("Solid: training minibatch loss, mean of the last %d steps; dashed: loss on the validation windows (step 0: the initial weights). Per-step losses are in <activation>/steps.csv.", smooth)}); err != nil {
		return err
	}
	return r.Plot("loss_val_late", report.PlotSpec{Title: "Validation loss, second half of training", XLabel: "step", YLabel: "cross-entropy (nats/char)",
		Series: late, DPI: c.DPI, Caption: "The same validation curves from step " + fmt.Sprint((c.Steps+1)/2) + " on, with the y axis zoomed in."})
}

// alongTheWay compares the validation curves of run and base before the
// end: a difference in speed of learning need not survive to the end.
func alongTheWay(base, run runResult) string {
	lower, n, gap, at := 0, 0, 0.0, 0
	for i, e := range run.Evals {
		if e.Step == 0 || i >= len(base.Evals) || base.Evals[i].Step != e.Step {
			continue
		}
		d := e.ValLoss - base.Evals[i].ValLoss
		n++
		if d < 0 {
			lower++
		}
		if math.Abs(d) > math.Abs(gap) {
			gap, at = d, e.Step
		}
	}
	return fmt.Sprintf("Along the way %s's validation loss was below %s's at %d of %d evaluations; the largest difference %s − %s was %s nats, at step %d.",
		run.Act.Name(), base.Act.Name(), lower, n, run.Act.Name(), base.Act.Name(), report.Format(gap), at)
}

// maxRise returns the largest rise of the trailing smooth-step mean of the
// training loss above its running minimum, and the step where it peaked.
func maxRise(steps []float64) (rise float64, at int) {
	k := min(smooth, len(steps))
	low := math.Inf(1)
	for i := k - 1; i < len(steps); i++ {
		m := mean(steps[i+1-k : i+1])
		low = math.Min(low, m)
		if m-low > rise {
			rise, at = m-low, i+1
		}
	}
	return rise, at
}

// blockSE is the batch-means standard error of the mean of v: the standard
// deviation of the means of (up to) 32 contiguous blocks over √blocks.
// Neighbouring windows share text, so their losses are correlated and the
// naive sd/√n would understate the error; blocks of consecutive windows (in
// text order) are far less dependent.
func blockSE(v []float64) float64 {
	b := min(32, len(v)/2)
	if b < 2 {
		return math.NaN()
	}
	means := make([]float64, b)
	for i := range b {
		means[i] = mean(v[i*len(v)/b : (i+1)*len(v)/b])
	}
	m, ss := mean(means), 0.0
	for _, x := range means {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(b-1) / float64(b))
}

// comparison reports each activation's final validation loss against the
// first one's, with the evaluation noise, and says what can be concluded.
func comparison(r *report.Report, c config, res *results) {
	r.Section("Comparison")
	if len(res.Runs) < 2 {
		r.Text("Only one activation was trained; there is nothing to compare.")
		return
	}
	base := res.Runs[0]
	var rows [][]any
	var lines []string
	for _, run := range res.Runs[1:] {
		diff := make([]float64, len(run.ValRows))
		for i := range diff {
			diff[i] = run.ValRows[i] - base.ValRows[i]
		}
		delta, se := mean(diff), blockSE(diff)
		z := delta / se
		rows = append(rows, []any{run.Act.Name() + " − " + base.Act.Name(), delta, bits(delta), se, z})
		r.Set(key(run.Act)+".delta_val_loss", delta)
		r.Set(key(run.Act)+".delta_val_loss_se", se)
		verdict := "is within two standard errors of zero: on these windows the two models are not distinguishable"
		if math.Abs(z) >= 2 {
			better := run.Act.Name()
			if delta > 0 {
				better = base.Act.Name()
			}
			verdict = fmt.Sprintf("is %.1f standard errors from zero: this run's %s model predicts the held-out text better", math.Abs(z), better)
		}
		lines = append(lines, fmt.Sprintf("- %s − %s: %s nats (%s bits) per character, which %s. %s", run.Act.Name(), base.Act.Name(),
			report.FormatPM(delta, se), report.FormatPM(bits(delta), bits(se)), verdict, alongTheWay(base, run)))
	}
	r.Table("comparison", []string{"difference", "Δ final val loss (nats)", "Δ bits/char", "standard error (nats)", "z"}, rows)
	r.Text(fmt.Sprintf("Δ is the mean over the %d scored validation windows of the per-window loss difference (same windows for every "+
		"model); the standard error is by batch means over 32 contiguous blocks of windows in text order, since neighbouring windows "+
		"share characters.", len(base.ValRows)))
	for _, run := range res.Runs {
		if rise, at := maxRise(run.Steps); rise > 0.2 {
			lines = append(lines, fmt.Sprintf("- %s's training loss rose by %s nats around step %d: an instability (see the plot) that "+
				"costs it steps, so part of any gap can come from that event rather than from how the activation trains when stable; "+
				"a lower -lr or a smaller -clip may avoid it.", run.Act.Name(), report.Format(rise), at))
		}
	}
	r.Text(strings.Join(lines, "\n"))
	r.Text(fmt.Sprintf("What this does and does not show. The standard error covers only the choice of validation text. Each "+
		"activation was trained once (seed %d): the initial weights and batch order were shared, but how much the final loss moves "+
		"with another seed is not measured here, and it can be as large as the differences above. The run is also short (%d steps, "+
		"%.2f epochs) and every activation used the same learning rate, not one tuned for it, so the ranking after this budget need not hold for longer "+
		"training or other settings. A claim that one activation is better needs several seeds (rerun with -seed 2, 3, …) and the "+
		"difference compared with the spread across seeds.", c.Seed, c.Steps, float64(c.Steps*c.Batch)/float64(res.Data.TrainLen)))
}

func speed(r *report.Report, res *results) {
	r.Section("Speed")
	var secs float64
	var tokens int
	for _, run := range res.Runs {
		secs += run.Seconds
		tokens += run.Tokens
	}
	r.Set("tokens_per_s", float64(tokens)/secs)
	r.Set("train_seconds", secs)
	r.Text(fmt.Sprintf("Training ran at %s tokens (predicted characters) per second over all runs: %s s for %d tokens, "+
		"counting forward, backward and optimizer steps, not evaluations. Measured with %s on %d CPUs (GOMAXPROCS %d); timings "+
		"vary with the machine and its load, and are the only numbers that differ between two runs of the same command. "+
		"Differences in tokens/s between the runs above mostly follow changes in that load; to compare the activations' speed, run "+
		"them back to back with `go test ./examples/transformer-ffn -run '^$' -bench TrainStep -benchtime 10x`.",
		report.Format(float64(tokens)/secs), report.Format(secs), tokens, ops.BLASName(), runtime.NumCPU(), runtime.GOMAXPROCS(0)))
}

func describe(r *report.Report) {
	for _, d := range [][2]string{
		{"*.initial_val_loss", "validation loss (nats/char) of the initial weights, before any step"},
		{"*.final_train_loss", "mean training minibatch loss (nats/char) over the last evaluation interval"},
		{"*.final_train_bpc", "final_train_loss in bits per character"},
		{"*.final_val_loss", "loss (nats/char) of the final model on the scored validation windows"},
		{"*.final_val_bpc", "final_val_loss in bits per character"},
		{"*.final_val_accuracy", "fraction of scored validation windows whose most likely next character is the true one"},
		{"*.train_loss_max_rise", fmt.Sprintf("largest rise (nats) of the training loss, averaged over %d steps, above its lowest value so far", smooth)},
		{"*.train_loss_max_rise_step", "the step where that rise peaked"},
		{"*.train_seconds", "wall time of the training steps (forward, backward, update), evaluations excluded; varies between runs"},
		{"*.tokens_per_s", "characters trained on per second of training steps; varies between runs"},
		{"*.delta_val_loss", "final_val_loss minus that of the first activation, as the mean per-window difference (nats/char)"},
		{"*.delta_val_loss_se", "batch-means standard error of delta_val_loss over the scored windows (validation-text noise only, not seed noise)"},
		{"tokens_per_s", "characters trained on per second over all runs; varies between runs"},
		{"train_seconds", "total wall time of the training steps of all runs; varies between runs"},
		{"data.chars", "characters in the text"},
		{"data.vocab", "distinct characters (the vocabulary)"},
		{"data.train_windows", "training windows (positions with K preceding characters in training chunks)"},
		{"data.val_windows", "validation windows held out"},
		{"data.eval_windows", "validation windows scored"},
		{"model.params", "trainable parameters"},
	} {
		r.Describe(d[0], d[1])
	}
}
