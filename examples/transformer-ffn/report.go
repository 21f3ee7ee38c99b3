package main

// report.md, summary.json, the tables and the plots.

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// key is the activation's name in summary keys and folder names.
func key(a activation.Activation) string {
	return strings.NewReplacer(":", "_", ".", "_").Replace(a.Name())
}

// smooth is the number of steps averaged in the plotted training loss.
const smooth = 10

func writeReport(c config, res *results) error {
	r, err := report.New(c.Out, "Transformer feed-forward blocks on characters: "+strings.ReplaceAll(c.Acts.String(), ",", " vs "), report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	d, s := res.Data, res.Shape
	r.Text(fmt.Sprintf("A next-character model without attention: the previous %d characters are embedded (%d numbers each), "+
		"projected to width %d, passed through %d pre-LN Transformer feed-forward blocks x + fc2(act(fc1(LN(x)))) of inner width %d, "+
		"a final LayerNorm and a Linear to the %d characters of the vocabulary. Each activation is trained with %d seed(s) from %d; "+
		"with one seed, every activation starts from the same initial weights and sees the same batches in the same order: only the "+
		"activation differs.", s.Context, s.Embed, s.Dim, s.Layers, s.Hidden, s.Vocab, c.Seeds, c.Seed))
	r.Section("Setup")
	init, clip := "PyTorch-style default initialization from the seed", "no gradient clipping"
	if c.Init != "" {
		init = "loaded from " + c.Init
	}
	if c.Clip > 0 {
		clip = fmt.Sprintf("gradient norm clipped to %v", c.Clip)
	}
	epochs := float64(c.Steps*c.Batch) / float64(d.Train.Len())
	r.Table("setup", []string{"setting", "value"}, [][]any{
		{"text", fmt.Sprintf("%s: %d characters, %d distinct", d.Name, d.Chars, s.Vocab)},
		{"split", fmt.Sprintf("chunks of %d characters, %.0f%% held out (seed %d); windows never cross a chunk", c.ChunkLen, 100*c.ValFraction, c.Seed)},
		{"training windows", d.Train.Len()},
		{"validation windows", fmt.Sprintf("%d held out, %d scored (a seeded sample)", d.Val.Len(), d.Eval.Len())},
		{"model", fmt.Sprintf("K=%d, e=%d, d=%d, d_ff=%d, L=%d: %d parameters (float32)", s.Context, s.Embed, s.Dim, s.Hidden, s.Layers, s.params())},
		{"initial weights", init},
		{"optimizer", fmt.Sprintf("SGD, momentum %v, peak lr %v, %d warmup steps, cosine decay to 0; %s", c.Momentum, c.LR, c.Warmup, clip)},
		{"training", fmt.Sprintf("%d steps of %d windows (%d characters predicted, %.2f epochs)", c.Steps, c.Batch, c.Steps*c.Batch, epochs)},
		{"evaluation", fmt.Sprintf("every %d steps and at the end; train loss = mean minibatch loss since the previous evaluation", c.EvalEvery)},
	})
	r.Section("Results")
	var rows [][]any
	for _, run := range res.Runs {
		rise, at := maxRise(run.Vectors["step_loss"])
		rows = append(rows, []any{run.Setting.Name(), run.Seed, run.Curve.Metric("val_loss")[0], run.Curve.Last("train_loss"),
			run.Curve.Last("val_loss"), run.Curve.Last("val_bpc"), run.Curve.Last("val_accuracy"), rise, at, run.StepSeconds, tokensPerSec(c, run)})
	}
	r.Table("results", []string{"activation", "seed", "initial val loss", "final train loss", "final val loss", "val bits/char", "val accuracy",
		"largest rise of train loss", "at step", "train time (s)", "tokens/s"}, rows)
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
	r.Text(fmt.Sprintf("Losses are cross-entropies in nats per character; bits per character = nats / ln 2. The largest rise is "+
		"how far the training loss (mean of %d steps) climbed above its lowest value so far, at the step where that rise peaked: a "+
		"sign of instability when it is large. In summary.json the keys of an activation start with its -acts name, ':' and '.' "+
		"replaced by '_', and hold the median over seeds (the rise: the largest over seeds).", smooth))
	if err := curves(r, c, res); err != nil {
		return err
	}
	comparison(r, c, res)
	speed(r, c, res)
	describe(r)
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
func curves(r *report.Report, c config, res *results) error {
	if err := experiment.WriteCurves(r, "curves", res.Runs, []string{"activation", "seed", "step"},
		func(run *runResult, step int) []any { return []any{run.Setting.Name(), run.Seed, step} }); err != nil {
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
	if err := r.Plot("loss", report.PlotSpec{Title: "Loss vs step", XLabel: "step", YLabel: "cross-entropy (nats/char)",
		Series: append(train, val...), DPI: c.DPI,
		Caption: fmt.Sprintf("Solid: training minibatch loss, mean of the last %d steps; dashed: loss on the validation windows (step 0: the initial weights). "+
			"Lines are medians over seeds, shaded from the lowest to the highest seed. Per-step losses are in <activation>/seed<n>/steps.csv.", smooth)}); err != nil {
		return err
	}
	return r.Plot("loss_val_late", report.PlotSpec{Title: "Validation loss, second half of training", XLabel: "step", YLabel: "cross-entropy (nats/char)",
		Series: late, DPI: c.DPI, Caption: "The same validation curves from step " + fmt.Sprint((c.Steps+1)/2) + " on, with the y axis zoomed in."})
}

// comparison reports each activation's final validation loss against the
// first one's: per seed on the same windows, with the evaluation noise, and
// over seeds.
func comparison(r *report.Report, c config, res *results) {
	r.Section("Comparison")
	gs := experiment.Groups(res.Runs)
	if len(gs) < 2 {
		r.Text("Only one activation was trained; there is nothing to compare.")
		return
	}
	base := gs[0]
	var rows [][]any
	var lines []string
	for _, g := range gs[1:] {
		var deltas, ses []float64
		for i, run := range g.Runs {
			a, b := run.Vectors["val_rows"], base.Runs[i].Vectors["val_rows"]
			diff := make([]float64, len(a))
			for j := range diff {
				diff[j] = a[j] - b[j]
			}
			delta, se := experiment.Summarize(diff).Mean, experiment.BlockSE(diff, 32)
			deltas, ses = append(deltas, delta), append(ses, se)
			rows = append(rows, []any{g.Name + " − " + base.Name, run.Seed, delta, bits(delta), se, delta / se})
		}
		sum, p := experiment.Summarize(deltas), experiment.Compare(g.Final("val_loss"), base.Final("val_loss"))
		delta, se, z := sum.Mean, sum.SE, sum.Mean/sum.SE
		verdict := "is within two standard errors of zero: the two activations are not distinguishable here"
		if c.Seeds == 1 {
			se, z = ses[0], deltas[0]/ses[0]
			verdict = "is within two standard errors of zero: on these windows the two models are not distinguishable"
		}
		if math.Abs(z) >= 2 {
			better := g.Name
			if delta > 0 {
				better = base.Name
			}
			verdict = fmt.Sprintf("is %.1f standard errors from zero: %s predicts the held-out text better", math.Abs(z), better)
			if c.Seeds == 1 {
				verdict = fmt.Sprintf("is %.1f standard errors from zero: this run's %s model predicts the held-out text better", math.Abs(z), better)
			}
		}
		r.Set(g.Name+".delta_val_loss", delta)
		r.Set(g.Name+".delta_val_loss_se", se)
		r.Set(g.Name+".lower_seeds", p.Lower)
		r.Set(g.Name+".p_value", p.P)
		lines = append(lines, fmt.Sprintf("- %s − %s: %s nats (%s bits) per character, which %s. %s lower in %d of %d seeds (one-sided sign test p = %s). %s",
			g.Name, base.Name, report.FormatPM(delta, se), report.FormatPM(bits(delta), bits(se)), verdict, g.Name, p.Lower, p.N,
			report.Format(p.P), alongTheWay(base, g)))
	}
	r.Table("comparison", []string{"difference", "seed", "Δ final val loss (nats)", "Δ bits/char", "standard error (nats)", "z"}, rows)
	r.Text(fmt.Sprintf("Δ is, per seed, the mean over the %d scored validation windows of the per-window loss difference (same windows for every "+
		"model); its standard error is by batch means over 32 contiguous blocks of windows in text order, since neighbouring windows "+
		"share characters, and covers only the choice of validation text. Over several seeds the list below gives the mean Δ with its "+
		"standard error across seeds, which includes how much the result moves with the initial weights and the batch order.", res.Data.Eval.Len()))
	for _, run := range res.Runs {
		if rise, at := maxRise(run.Vectors["step_loss"]); rise > 0.2 {
			lines = append(lines, fmt.Sprintf("- %s, seed %d: the training loss rose by %s nats around step %d: an instability (see the plot) that "+
				"costs it steps, so part of any gap can come from that event rather than from how the activation trains when stable; "+
				"a lower -lr or a smaller -clip may avoid it.", run.Setting.Name(), run.Seed, report.Format(rise), at))
		}
	}
	r.Text(strings.Join(lines, "\n"))
	r.Text(fmt.Sprintf("What this does and does not show. %d seed(s) from %d; the one-sided sign test needs at least %d seeds, all agreeing, "+
		"to reach p ≤ 0.05, and with a single seed the standard error is the validation text's only: how much the final loss moves "+
		"with another seed is then not measured, and it can be as large as the differences above. The run is also short (%d steps, "+
		"%.2f epochs) and every activation used the same learning rate, not one tuned for it, so the ranking after this budget need "+
		"not hold for longer training or other settings.", c.Seeds, c.Seed, experiment.MinPairs(0.05), c.Steps, float64(c.Steps*c.Batch)/float64(res.Data.Train.Len())))
}

// alongTheWay compares the median validation curves of g and base before
// the end: a difference in speed of learning need not survive to the end.
func alongTheWay(base, g *experiment.Group[activation.Activation]) string {
	a, b := g.Band("val_loss"), base.Band("val_loss")
	lower, n, gap, at := 0, 0, 0.0, 0
	for i, step := range a.Steps {
		if step == 0 || i >= len(b.Steps) || b.Steps[i] != step {
			continue
		}
		d := a.Median[i] - b.Median[i]
		n++
		if d < 0 {
			lower++
		}
		if math.Abs(d) > math.Abs(gap) {
			gap, at = d, step
		}
	}
	return fmt.Sprintf("Along the way %s's median validation loss was below %s's at %d of %d evaluations; the largest difference %s − %s was %s nats, at step %d.",
		g.Name, base.Name, lower, n, g.Name, base.Name, report.Format(gap), at)
}

func speed(r *report.Report, c config, res *results) {
	r.Section("Speed")
	secs, tokens := speedOf(c, res.Runs)
	r.Set("tokens_per_s", tokens/secs)
	r.Set("train_seconds", secs)
	r.Text(fmt.Sprintf("Training ran at %s tokens (predicted characters) per second of training steps over all runs: %s s for %.0f tokens, "+
		"counting forward, backward and optimizer steps, not evaluations (with -workers %d, that many runs shared the machine). "+
		"Measured with %s on %d CPUs (GOMAXPROCS %d); timings vary with the machine and its load, and are the only numbers that "+
		"differ between two runs of the same command. To compare the activations' speed, run them back to back with "+
		"`go test ./examples/transformer-ffn -run '^$' -bench TrainStep -benchtime 10x`.",
		report.Format(tokens/secs), report.Format(secs), tokens, c.Workers, gemm.Name(), runtime.NumCPU(), runtime.GOMAXPROCS(0)))
}

func describe(r *report.Report) {
	for _, d := range [][2]string{
		{"*.initial_val_loss", "validation loss (nats/char) of the initial weights, before any step: median over seeds"},
		{"*.final_train_loss", "mean training minibatch loss (nats/char) over the last evaluation interval: median over seeds"},
		{"*.final_train_bpc", "final_train_loss in bits per character"},
		{"*.final_val_loss", "loss (nats/char) of the final model on the scored validation windows: median over seeds"},
		{"*.final_val_bpc", "final_val_loss in bits per character"},
		{"*.final_val_accuracy", "fraction of scored validation windows whose most likely next character is the true one: median over seeds"},
		{"*.train_loss_max_rise", fmt.Sprintf("largest rise (nats) of the training loss, averaged over %d steps, above its lowest value so far: the largest over seeds", smooth)},
		{"*.train_loss_max_rise_step", "the step where that rise peaked"},
		{"*.train_seconds", "wall time of the training steps (forward, backward, update) of all seeds, evaluations excluded; varies between runs"},
		{"*.tokens_per_s", "characters trained on per second of training steps; varies between runs"},
		{"*.delta_val_loss", "final validation loss minus that of the first activation, as the mean per-window difference (nats/char), averaged over seeds"},
		{"*.delta_val_loss_se", "standard error of delta_val_loss: with several seeds across seeds (sd/√seeds); with one seed the batch-means error over the windows (validation-text noise only)"},
		{"*.lower_seeds", "seeds in which this activation's final validation loss is lower than the first activation's"},
		{"*.p_value", "one-sided sign test: probability of at least lower_seeds lower seeds by chance if neither activation were better"},
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
