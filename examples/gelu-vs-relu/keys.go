package main

// summary.json: the settings and every reported number, under documented
// keys. <opt> is adam or sgd, <act> an activation name as -acts takes it.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

func describe(r *report.Report, c config) {
	for _, d := range [][2]string{
		{"config.*", "the settings of this run (config.blas: the matrix-multiply library; results differ in the last bits between BLAS libraries)"},
		{"*.lr", "learning rate reported for this optimizer and activation (chosen on the validation set when -<opt>-lr lists several)"},
		{"*.final.train_loss.*", "training loss at the last evaluation (mean mini-batch cross-entropy in nats since the evaluation before; with dropout the dropout-on loss): median, min and max over seeds"},
		{"*.final.train_loss_nodrop.*", "with -dropout: cross-entropy with dropout off on a fixed 5000-image training subset at the last evaluation (median, min, max over seeds)"},
		{"*.final.test_error.*", "fraction of the test images misclassified at the last evaluation: median, min and max over seeds"},
		{"*.final.test_loss.*", "mean test cross-entropy (nats) at the last evaluation: median, min and max over seeds"},
		{"*.final.val_error.*", "fraction of the held-out validation images misclassified at the last evaluation: median, min, max over seeds"},
		{"*.final.val_loss.*", "mean validation cross-entropy at the last evaluation: median, min, max over seeds"},
		{"*.mean_train_loss.*", "training loss averaged over all evaluations of a run (the area under its training curve; lower = lower sooner): median, min, max over seeds; with dropout, of the dropout-off loss"},
		{"*.diverged", "runs of this optimizer and activation stopped by a NaN or infinite loss, gradient or weight"},
		{"compare.*.lower_seeds", "seeds (paired) in which the first activation's value is lower than the second's; compare.<opt>.<quantity>.<a>_vs_<b>"},
		{"compare.*.pairs", "seeds in which both values are finite and differ (the sign test's n)"},
		{"compare.*.p_value", "one-sided sign test: probability of at least lower_seeds of pairs by chance if neither activation were better"},
		{"init_rms.*", "root mean square of the pre-activations of hidden layer k (k = layers+1: the logits) at initialization (first seed, first training batch); init_rms.<act>.<k>; init_rms.<act>.factor: geometric mean of the ratios between consecutive hidden layers"},
	} {
		r.Describe(d[0], d[1])
	}
}

// setConfig records the settings, and per optimizer and activation the
// final values; called once the groups exist.
func setConfig(r *report.Report, c config, d *data) {
	for k, v := range map[string]any{
		"config.epochs": c.Epochs, "config.seeds": c.Seeds, "config.first_seed": int(c.Seed), "config.batch": c.Batch,
		"config.layers": c.Layers, "config.width": c.Width, "config.dropout": c.Dropout, "config.momentum": c.Momentum,
		"config.train_examples": d.train.Len(), "config.test_examples": d.test.Len(), "config.val_examples": c.Val,
		"config.steps_per_epoch": d.stepsPerEpoch, "config.eval_steps": d.evalSteps, "config.blas": ops.BLASName(),
		"config.activations": names(c.Acts), "config.optimizers": c.Opts, "config.adam_lr": c.AdamLR, "config.sgd_lr": c.SGDLR,
	} {
		r.Set(k, v)
	}
}

func names(as []ops.Activation) []string {
	var s []string
	for _, a := range as {
		s = append(s, a.Name())
	}
	return s
}

// setFinal records the final values of the reported groups.
func setFinal(r *report.Report, c config, gs []*group) {
	for _, g := range selected(gs) {
		p := fmt.Sprintf("%s.%s.", g.Opt, g.Act.Name())
		r.Set(p+"lr", g.LR)
		r.Set(p+"diverged", g.diverged())
		for _, m := range metrics {
			v := g.final(m.Key)
			if allNaN(v) {
				continue
			}
			med, lo, hi := medianOf(v)
			r.Set(p+"final."+m.Key+".median", med)
			r.Set(p+"final."+m.Key+".min", lo)
			r.Set(p+"final."+m.Key+".max", hi)
		}
		med, lo, hi := medianOf(g.meanTrainLoss(c.trainKey()))
		r.Set(p+"mean_train_loss.median", med)
		r.Set(p+"mean_train_loss.min", lo)
		r.Set(p+"mean_train_loss.max", hi)
	}
}

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}
