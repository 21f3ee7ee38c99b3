package main

// report.md: the setup against the paper's, the results tables, the plots
// and what a run of this length can show.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

const paperEpochs, paperSeeds = 50, 5

func label(a ops.Activation) string {
	switch a.Name() {
	case "relu":
		return "ReLU"
	case "gelu":
		return "GELU"
	case "gelu_tanh":
		return "GELU (tanh)"
	case "gelu_sigmoid":
		return "GELU (sigmoid)"
	case "elu":
		return "ELU"
	case "silu":
		return "SiLU"
	case "softplus":
		return "Softplus"
	}
	return a.Name()
}

func (c config) optLabel(opt string) string {
	if opt == "sgd" {
		return fmt.Sprintf("SGD, momentum %g", c.Momentum)
	}
	return "Adam"
}

func writeReport(c config, d *data, runs []*runResult) ([]*group, error) {
	gs, err := groupRuns(c, runs)
	if err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "ReLU, GELU, ELU and SiLU on MNIST in the GELU paper's setup", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	length := fmt.Sprintf("%d epoch(s) × %d seed(s)", c.Epochs, c.Seeds)
	if c.Epochs < paperEpochs || c.Seeds < paperSeeds {
		length = fmt.Sprintf("**a short run: %d epoch(s) × %d seed(s); the paper: %d epochs × %d seeds** (`-full` runs that, for hours)",
			c.Epochs, c.Seeds, paperEpochs, paperSeeds)
	}
	r.Text(fmt.Sprintf("The fully connected MNIST classifier of Hendrycks & Gimpel, *Gaussian Error Linear Units (GELUs)*, 2016 "+
		"(arXiv:1606.08415, §3.1; their code: github.com/hendrycks/GELUs, `mnist_fcn.py`), trained with %s and %s, "+
		"each with %s. This is %s. Seeds are paired: seed s gives every activation and optimizer the same initial "+
		"weights and the same batch order, so differences between activations at one seed are not differences of luck in the "+
		"initialization. Curves show the median over seeds and, shaded, the range from the lowest to the highest seed.",
		listLabels(c.Acts[:len(c.Acts)-1]), label(c.Acts[len(c.Acts)-1]), optList(c), length))
	setupTable(r, c, d)
	if err := initScaleTable(r, c, d); err != nil {
		return nil, err
	}
	resultTables(r, c, gs)
	setFinal(r, c, gs)
	for _, o := range c.Opts {
		plots(r, c, gs, o)
	}
	epochTables(r, c, d, gs)
	if err := claims(r, c, gs); err != nil {
		return nil, err
	}
	r.Section("Run time and files")
	r.Text(fmt.Sprintf("%d runs of %d optimizer steps each (%d per epoch). Wall-clock times, which differ between reruns, are in "+
		"[timing.csv](timing.csv) and nowhere else, so that every other file is identical when the same command runs again on "+
		"the same machine with the same BLAS (here: %s). Each run's own files are in `runs/<optimizer>/lr<rate>/<activation>/seed<n>/`: "+
		"the trainer's `steps.csv` and `evals.csv` (there `val_*` is the test set), `points.csv` (every evaluation, with the "+
		"validation set), `model.safetensors` (PyTorch state_dict names) and `run.json` (the settings, for `-resume`).",
		len(runs), d.stepsPerEpoch*c.Epochs, d.stepsPerEpoch, ops.BLASName()))
	describe(r, c)
	setConfig(r, c, d)
	return gs, r.Close()
}

func optList(c config) string {
	var s []string
	for _, o := range c.Opts {
		s = append(s, c.optLabel(o))
	}
	return strings.Join(s, " and with ")
}

func listLabels(as []ops.Activation) string {
	var s []string
	for _, a := range as {
		s = append(s, label(a))
	}
	return strings.Join(s, ", ")
}

func setupTable(r *report.Report, c config, d *data) {
	r.Section("Setup, and where it differs from the paper")
	valNote := "none held out"
	if d.val != nil {
		valNote = fmt.Sprintf("%d more held out for validation, a seeded split", d.val.Len())
	}
	lr := func(o string) string {
		s := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.lrs(o))), ", "), "[]")
		if len(c.lrs(o)) > 1 {
			s += ", chosen per activation by the lowest median final validation error"
		}
		return s
	}
	opt := "Adam (β₁ 0.9, β₂ 0.999, ε 1e-8, PyTorch's update), learning rate " + lr("adam")
	if !contains(c.Opts, "adam") {
		opt = "not run"
	}
	sgd := fmt.Sprintf("SGD with heavy-ball momentum %g (PyTorch's convention), learning rate %s", c.Momentum, lr("sgd"))
	if !contains(c.Opts, "sgd") {
		sgd = "not run"
	}
	trainLoss := "mean mini-batch loss over the steps since the previous evaluation"
	if c.Dropout > 0 {
		trainLoss += " (dropout on); the plots and claims use the loss with dropout off on a fixed 5000-image training subset"
	}
	rows := [][]any{
		{"data", fmt.Sprintf("MNIST: %d training images (%s), %d test images; pixels in [0, 1], not standardized", d.train.Len(), valNote, d.test.Len()),
			"MNIST: 55000 training, 5000 validation (TensorFlow's split), 10000 test; pixels in [0, 1]"},
		{"network", fmt.Sprintf("%d → %d hidden layers of %d → 10, fully connected", d.train.Features, c.Layers, c.Width), "8 layers, 128 units wide"},
		{"initialization", "every weight matrix (output layer too) with rows of unit norm (graph.UnitNormRows), biases 0",
			"the same (\"unit norm rows\"; the code normalizes each unit's incoming weights), biases 0"},
		{"activations", listLabels(c.Acts) + "; GELU = x·Φ(x) exactly, GELU (tanh) = the tanh form",
			"GELU, ReLU, ELU (α = 1); GELU was the tanh form in every experiment (paper, §GELU approximations)"},
		{"optimizer", opt, "Adam, learning rate tuned over {1e-3, 1e-4, 1e-5} on the 5000 validation images"},
		{"second optimizer", sgd, "none (SGD appears only as what Clevert et al. used)"},
		{"batch size", fmt.Sprint(c.Batch), "128"},
		{"epochs", fmt.Sprint(c.Epochs), "50"},
		{"seeds", fmt.Sprintf("%d (%d to %d), paired", c.Seeds, c.Seed, c.Seed+uint64(c.Seeds)-1), "5 runs, medians shown"},
		{"dropout", fmt.Sprint(c.Dropout), "0 and 0.5"},
		{"training loss", trainLoss, "the mini-batch loss of each step (with dropout: of the network without dropout, on the same batch)"},
		{"evaluations", fmt.Sprintf("every %d steps and at each epoch end (%d per run)", d.evalEvery, len(d.evalSteps)), "3 per epoch"},
		{"arithmetic", "float32; BLAS: " + ops.BLASName(), "float32 (TensorFlow)"},
	}
	r.Table("setup", []string{"setting", "this run", "the paper"}, rows)
	if c.Epochs < paperEpochs || c.Seeds < paperSeeds {
		r.Text(fmt.Sprintf("This run is shorter than the paper's: %d of %d epochs and %d of %d seeds. It shows the first part of "+
			"the curves only; the paper's statements are about the whole 50 epochs.", c.Epochs, paperEpochs, c.Seeds, paperSeeds))
	}
	if contains(c.Opts, "sgd") {
		r.Text("SGD's learning rate is this program's choice; the paper has no SGD run. No single rate suits all five activations " +
			"here. In a pilot with this program (`-opts sgd -sgd-lr 0.01,0.03,0.05,0.1`, one epoch, seeds 1–2), ReLU trained at every rate " +
			"and ELU at every rate up to 0.05 (at 0.1 it diverged for one seed), while the GELU and SiLU networks stayed near " +
			"chance for at least the first third of the epoch at every rate up to 0.05 (at 0.01 for the whole epoch). The " +
			"default, 0.05, is the largest rate at which nothing diverged; it handicaps GELU and SiLU at the start. " +
			"`-sgd-lr 0.01,0.03,0.1` instead chooses a rate per activation on the validation set, the paper's protocol for Adam. " +
			"The cause shows in the table below. With unit-norm rows a layer's pre-activations have, on average over random " +
			"directions, the mean square of its inputs, so the activation alone sets how the signal's size changes with depth. " +
			"For small inputs GELU and SiLU are about x/2, which halves the size per layer; ReLU keeps 1/√2 of it (half the " +
			"mean square) and ELU, about x, all of it. The GELU network's initial logits are then so small that its outputs " +
			"are nearly uniform and its early gradients tiny, which Adam's per-parameter scaling undoes and SGD does not.")
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// trainKey is the training-loss metric the comparisons use: the paper's
// loss without dropout when dropout is on.
func (c config) trainKey() string {
	if c.Dropout > 0 {
		return "train_loss_nodrop"
	}
	return "train_loss"
}

func pct(v float64) float64 { return 100 * v }

func rangeStr(lo, hi float64, scale float64) string {
	if math.IsNaN(lo) {
		return "NaN"
	}
	return report.Format(scale*lo) + "–" + report.Format(scale*hi)
}

func resultTables(r *report.Report, c config, gs []*group) {
	r.Section("Results at the end of training")
	header := []string{"activation"}
	for _, o := range c.Opts {
		header = append(header, c.optLabel(o)+": test error (%), median", c.optLabel(o)+": min–max")
	}
	var rows [][]any
	for _, a := range c.Acts {
		row := []any{label(a)}
		for _, o := range c.Opts {
			med, lo, hi := medianOf(find(gs, o, a).final("test_error"))
			row = append(row, pct(med), rangeStr(lo, hi, 100))
		}
		rows = append(rows, row)
	}
	r.Text(ranking(c, gs))
	r.Text(fmt.Sprintf("Test error after %d epoch(s), over %d seed(s):", c.Epochs, c.Seeds))
	r.Table("final_test_error", header, rows)

	rows = nil
	tk := c.trainKey()
	for _, g := range selected(gs) {
		tl, tlo, thi := medianOf(g.final(tk))
		ml, mlo, mhi := medianOf(g.meanTrainLoss(tk))
		te, _, _ := medianOf(g.final("test_error"))
		ve, _, _ := medianOf(g.final("val_error"))
		rows = append(rows, []any{c.optLabel(g.Opt), label(g.Act), fmt.Sprint(g.LR), tl, rangeStr(tlo, thi, 1), ml, rangeStr(mlo, mhi, 1),
			pct(te), pct(ve), g.diverged()})
	}
	r.Text("Training loss (cross-entropy, nats) at the end and averaged over all evaluations (lower = lower sooner: " +
		"the area under the training curve), medians with the seed range; errors in %:")
	r.Table("final", []string{"optimizer", "activation", "lr", "final train loss", "final train loss, min–max",
		"mean train loss over the run", "mean train loss, min–max", "test error (%)", "validation error (%)", "diverged runs"}, rows)
	if len(gs) > len(selected(gs)) {
		rows = nil
		for _, g := range gs {
			ve, _, _ := medianOf(g.final("val_error"))
			vl, _, _ := medianOf(g.final("val_loss"))
			rows = append(rows, []any{c.optLabel(g.Opt), label(g.Act), fmt.Sprint(g.LR), pct(ve), vl, g.Selected})
		}
		r.Text("Learning-rate choice (median final validation error, then loss):")
		r.Table("lr_selection", []string{"optimizer", "activation", "lr", "validation error (%)", "validation loss", "chosen"}, rows)
	}
	for _, g := range gs {
		for _, run := range g.Runs {
			if run.Diverged != "" {
				r.Text(fmt.Sprintf("Diverged: %s, lr %g, %s, seed %d: %s. Its later evaluations are NaN and drop out of the medians.",
					c.optLabel(g.Opt), g.LR, label(g.Act), run.Key.Seed, run.Diverged))
			}
		}
	}
	writeCurves(r, gs)
}

// ranking orders the activations of each optimizer by median final test
// error and by median mean training loss.
func ranking(c config, gs []*group) string {
	var b strings.Builder
	b.WriteString("In order, best first (medians over seeds):\n")
	for _, o := range c.Opts {
		for _, by := range []struct {
			what  string
			get   func(*group) []float64
			scale float64
		}{{"final test error (%)", func(g *group) []float64 { return g.final("test_error") }, 100},
			{"mean training loss over the run", func(g *group) []float64 { return g.meanTrainLoss(c.trainKey()) }, 1}} {
			type entry struct {
				name string
				v    float64
			}
			var es []entry
			for _, a := range c.Acts {
				m, _, _ := medianOf(by.get(find(gs, o, a)))
				es = append(es, entry{label(a), by.scale * m})
			}
			slices.SortStableFunc(es, func(x, y entry) int { return cmpFloat(x.v, y.v) })
			var parts []string
			for _, e := range es {
				parts = append(parts, e.name+" "+report.Format(e.v))
			}
			fmt.Fprintf(&b, "- %s, %s: %s\n", c.optLabel(o), by.what, strings.Join(parts, ", "))
		}
	}
	return b.String()
}

// cmpFloat orders numbers ascending with NaN (all runs diverged) last.
func cmpFloat(x, y float64) int {
	if math.IsNaN(x) || math.IsNaN(y) {
		return cmp.Compare(nanRank(x), nanRank(y))
	}
	return cmp.Compare(x, y)
}

func nanRank(v float64) int {
	if math.IsNaN(v) {
		return 1
	}
	return 0
}

// writeCurves writes curves.csv: every group (all learning rates) at every
// evaluation, median/min/max over seeds of every metric.
func writeCurves(r *report.Report, gs []*group) {
	cols := []string{"activation", "optimizer", "lr", "selected", "step", "epoch"}
	for _, m := range metrics {
		cols = append(cols, m.Key+"_median", m.Key+"_min", m.Key+"_max")
	}
	r.Text("Every evaluation of every activation, optimizer and learning rate, median/min/max over seeds:")
	w, err := r.CSV("curves", cols...)
	if err != nil {
		return
	}
	for _, g := range gs {
		for i, p := range g.Runs[0].Points {
			row := []any{g.Act.Name(), g.Opt, g.LR, g.Selected, p.Step, p.Epoch}
			for _, m := range metrics {
				b := g.Band[m.Key]
				row = append(row, b[1][i], b[0][i], b[2][i])
			}
			w.Write(row...)
		}
	}
	w.Close()
}

func plots(r *report.Report, c config, gs []*group, opt string) {
	tk := c.trainKey()
	what := "mean mini-batch training loss since the previous evaluation"
	if c.Dropout > 0 {
		what = "training loss with dropout off (fixed 5000-image training subset)"
	}
	for _, spec := range []struct {
		name, title, ylabel, key string
		scale                    float64
	}{
		{"train_loss_" + opt, "Training loss, " + c.optLabel(opt), "cross-entropy (nats)", tk, 1},
		{"test_error_" + opt, "Test error, " + c.optLabel(opt), "test error (%)", "test_error", 100},
	} {
		var series []report.Series
		for _, a := range c.Acts {
			g := find(gs, opt, a)
			s := report.Series{Name: fmt.Sprintf("%s (lr %g)", label(a), g.LR), Dashed: a.Name() == "gelu_tanh"}
			b := g.Band[spec.key]
			for i, p := range g.Runs[0].Points {
				s.X = append(s.X, p.Epoch)
				s.Y, s.Lo, s.Hi = append(s.Y, spec.scale*b[1][i]), append(s.Lo, spec.scale*b[0][i]), append(s.Hi, spec.scale*b[2][i])
			}
			series = append(series, s)
		}
		logY := spansDecade(series)
		caption := fmt.Sprintf("Median over %d seed(s), shaded from the lowest to the highest seed", c.Seeds)
		if logY {
			caption += "; log scale"
		}
		caption += ". "
		if spec.key == tk {
			caption += "Each point is the " + what + "."
		} else {
			caption += "Each point is the error on the test images at that moment."
		}
		r.Plot(spec.name, report.PlotSpec{Title: spec.title, XLabel: "epoch", YLabel: spec.ylabel, Series: series, LogY: logY,
			DPI: c.DPI, Caption: caption})
	}
}

// spansDecade says whether the plotted values span more than a factor of
// 30, where a log axis helps; over less, its ticks (powers of ten only)
// would leave the axis with one label or none.
func spansDecade(series []report.Series) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range slices.Concat(s.Y, s.Lo, s.Hi) {
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return hi > 30*lo
}

// epochTables lists the medians at every evaluation (at most about 12 rows:
// later ones are thinned to epoch ends).
func epochTables(r *report.Report, c config, d *data, gs []*group) {
	var idx []int
	stride := max(1, (c.Epochs+11)/12)
	for i, s := range d.evalSteps {
		epochEnd := s%d.stepsPerEpoch == 0
		if len(d.evalSteps) <= 12 || (epochEnd && (s/d.stepsPerEpoch)%stride == 0) || i == len(d.evalSteps)-1 {
			idx = append(idx, i)
		}
	}
	r.Section("Medians along the way")
	for _, o := range c.Opts {
		for _, t := range []struct {
			name, what, key string
			scale           float64
		}{{"curve_train_loss_" + o, "training loss", c.trainKey(), 1}, {"curve_test_error_" + o, "test error (%)", "test_error", 100}} {
			header := []string{"epoch"}
			for _, a := range c.Acts {
				header = append(header, label(a))
			}
			var rows [][]any
			for _, i := range idx {
				row := []any{float64(d.evalSteps[i]) / float64(d.stepsPerEpoch)}
				for _, a := range c.Acts {
					row = append(row, t.scale*find(gs, o, a).Band[t.key][1][i])
				}
				rows = append(rows, row)
			}
			r.Text(fmt.Sprintf("%s, median %s:", c.optLabel(o), t.what))
			r.Table(t.name, header, rows)
		}
	}
}
