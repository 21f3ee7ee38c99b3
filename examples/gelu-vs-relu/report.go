package main

// report.md and summary.json: the setup against the paper's, the signal
// size at initialization, the results tables and plots.

import (
	"cmp"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

const paperEpochs, paperSeeds = 50, 5

func (c config) optLabel(opt string) string {
	if opt == "sgd" {
		return fmt.Sprintf("SGD, momentum %g", c.Momentum)
	}
	return "Adam"
}

// trainKey is the training-loss metric the comparisons use: the paper's
// loss without dropout when dropout is on.
func (c config) trainKey() string {
	if c.Dropout > 0 {
		return "train_loss_nodrop"
	}
	return "train_loss"
}

// best returns the group reported for opt and a.
func best(res *results, opt string, a activation.Activation) *group {
	i := slices.IndexFunc(res.Best, func(g *group) bool { return g.Setting.Opt == opt && g.Setting.Act == a })
	return res.Best[i]
}

func labels(as []activation.Activation, sep string) string {
	var s []string
	for _, a := range as {
		s = append(s, a.Title())
	}
	return strings.Join(s, sep)
}

// page is what report.md.tmpl shows besides the claims.
type page struct {
	config
	PaperEpochs, PaperSeeds    int
	Work                       float64 // the paper's epochs × seeds over this run's
	FirstActs, LastAct, OptsIn string  // "ReLU, GELU", "ELU", "Adam and with SGD, momentum 0.9"
	Setup, InitRMS             report.TableData
	Orders                     []string // "<optimizer>, <what>: <activation> <median>, …", best first
	FinalTestError, Final      report.TableData
	LRSelection                report.TableData // empty unless a learning rate was chosen
	Diverged                   []*runResult
	Curves                     string // curves.csv's link
	Plots                      []namedPlot
	Along                      []alongTable
	Alpha                      float64
	MinSeeds                   int
	Runs, StepsPerEpoch        int
	BLAS                       string
}

type namedPlot struct {
	Name, Caption string
	Spec          report.PlotSpec
}

// alongTable is a median curve of every activation at one optimizer.
type alongTable struct {
	Name, Opt, What string
	T               report.TableData
}

// Short is a run shorter than the paper's.
func (p *page) Short() bool { return p.Epochs < p.PaperEpochs || p.Seeds < p.PaperSeeds }

// OptLabel names an optimizer with its settings.
func (p *page) OptLabel(opt string) string { return p.optLabel(opt) }

// StepsPerRun is the optimizer steps of one run.
func (p *page) StepsPerRun() int { return p.Epochs * p.StepsPerEpoch }

// HasSGD is whether SGD ran.
func (p *page) HasSGD() bool { return slices.Contains(p.Opts, "sgd") }

func writeReport(c config, d *data, res *results) error {
	r, err := report.New(c.Out, "ReLU, GELU, ELU and SiLU on MNIST in the GELU paper's setup", report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	pg := &page{config: c, PaperEpochs: paperEpochs, PaperSeeds: paperSeeds, Work: float64(paperEpochs*paperSeeds) / float64(c.Epochs*c.Seeds),
		FirstActs: labels(c.Acts[:len(c.Acts)-1], ", "), LastAct: c.Acts[len(c.Acts)-1].Title(), Alpha: alpha, MinSeeds: experiment.MinPairs(alpha),
		Runs: len(res.Runs), StepsPerEpoch: d.stepsPerEpoch, BLAS: gemm.Name()}
	var opts []string
	for _, o := range c.Opts {
		opts = append(opts, c.optLabel(o))
	}
	pg.OptsIn = strings.Join(opts, " and with ")
	pg.Setup = setup(c, d)
	if pg.InitRMS, err = initScale(r, c, d); err != nil {
		return err
	}
	tables(r, c, d, res, pg)
	for _, o := range c.Opts {
		pg.Plots = append(pg.Plots, plots(c, d, res, o)...)
	}
	pg.Along = alongTheWay(c, d, res)
	claims(r, c, res)
	if err := r.Execute(reportTmpl, pg); err != nil {
		return err
	}
	r.DescribeKeys(keysText)
	for k, v := range map[string]any{
		"config.epochs": c.Epochs, "config.seeds": c.Seeds, "config.first_seed": int(c.Seed), "config.batch": c.Batch,
		"config.layers": c.Layers, "config.width": c.Width, "config.dropout": c.Dropout, "config.momentum": c.Momentum,
		"config.train_examples": d.train.Len(), "config.test_examples": d.test.Len(), "config.val_examples": c.Val,
		"config.steps_per_epoch": d.stepsPerEpoch, "config.eval_steps": d.evalSteps, "config.blas": gemm.Name(),
		"config.activations": strings.Split(c.Acts.String(), ","), "config.optimizers": []string(c.Opts),
		"config.adam_lr": []float64(c.AdamLR), "config.sgd_lr": []float64(c.SGDLR),
	} {
		r.Set(k, v)
	}
	return r.Close()
}

// setup compares this run's settings with the paper's.
func setup(c config, d *data) report.TableData {
	valNote := "none held out"
	if d.val != nil {
		valNote = fmt.Sprintf("%d more held out for validation, a seeded split", d.val.Len())
	}
	opt := map[string]string{"adam": "not run", "sgd": "not run"}
	for _, o := range c.Opts {
		lr := strings.ReplaceAll(c.lrsFlag(o), ",", ", ")
		if len(c.lrs(o)) > 1 {
			lr += ", chosen per activation by the lowest median final validation error"
		}
		opt[o] = map[string]string{"adam": "Adam (β₁ 0.9, β₂ 0.999, ε 1e-8, PyTorch's update), learning rate " + lr,
			"sgd": fmt.Sprintf("SGD with heavy-ball momentum %g (PyTorch's convention), learning rate %s", c.Momentum, lr)}[o]
	}
	trainLoss := "mean mini-batch loss over the steps since the previous evaluation"
	if c.Dropout > 0 {
		trainLoss += " (dropout on); the plots and claims use the loss with dropout off on a fixed 5000-image training subset"
	}
	return report.TableData{Header: []string{"setting", "this run", "the paper"}, Rows: [][]any{
		{"data", fmt.Sprintf("MNIST: %d training images (%s), %d test images; pixels in [0, 1], not standardized", d.train.Len(), valNote, d.test.Len()),
			"MNIST: 55000 training, 5000 validation (TensorFlow's split), 10000 test; pixels in [0, 1]"},
		{"network", fmt.Sprintf("%d → %d hidden layers of %d → 10, fully connected", d.train.Features, c.Layers, c.Width), "8 layers, 128 units wide"},
		{"initialization", "every weight matrix (output layer too) with rows of unit norm (graph.UnitNormRows), biases 0",
			"the same (\"unit norm rows\"; the code normalizes each unit's incoming weights), biases 0"},
		{"activations", labels(c.Acts, ", ") + "; GELU = x·Φ(x) exactly, GELU (tanh) = the tanh form",
			"GELU, ReLU, ELU (α = 1); GELU was the tanh form in every experiment (paper, §GELU approximations)"},
		{"optimizer", opt["adam"], "Adam, learning rate tuned over {1e-3, 1e-4, 1e-5} on the 5000 validation images"},
		{"second optimizer", opt["sgd"], "none (SGD appears only as what Clevert et al. used)"},
		{"batch size", fmt.Sprint(c.Batch), "128"},
		{"epochs", fmt.Sprint(c.Epochs), "50"},
		{"seeds", fmt.Sprintf("%d (%d to %d), paired", c.Seeds, c.Seed, c.Seed+uint64(c.Seeds)-1), "5 runs, medians shown"},
		{"dropout", fmt.Sprint(c.Dropout), "0 and 0.5"},
		{"training loss", trainLoss, "the mini-batch loss of each step (with dropout: of the network without dropout, on the same batch)"},
		{"evaluations", fmt.Sprintf("every %d steps and at each epoch end (%d per run)", d.evalEvery, len(d.evalSteps)), "3 per epoch"},
		{"arithmetic", "float32; BLAS: " + gemm.Name(), "float32 (TensorFlow)"},
	}}
}

func (c config) lrsFlag(opt string) string {
	if opt == "sgd" {
		return c.SGDLR.String()
	}
	return c.AdamLR.String()
}

// initScale tabulates the root mean square of each hidden layer's
// pre-activations (and of the logits) in the untrained network, seed
// c.Seed, on the first training batch of epoch 0.
func initScale(r *report.Report, c config, d *data) (report.TableData, error) {
	l, err := datasets.NewLoader(d.train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return report.TableData{}, err
	}
	b, err := l.Batch(0, 0)
	if err != nil {
		return report.TableData{}, err
	}
	header := []string{"activation"}
	for i := range c.Layers {
		header = append(header, fmt.Sprintf("layer %d", i+1))
	}
	var rows [][]any
	for _, a := range c.Acts {
		model, mlp, err := network(c, d, a, c.Seed, 0)
		if err != nil {
			return report.TableData{}, err
		}
		nodes := append(slices.Clone(mlp.Pre), model.Output)
		m, err := model.Graph.Compile(nil, graph.Keep(nodes...))
		if err == nil {
			err = m.Set(model.Input, b.X)
		}
		if err == nil {
			err = m.Run()
		}
		if err != nil {
			return report.TableData{}, err
		}
		row := []any{a.Title()}
		for k, n := range nodes {
			v, err := m.Value(n)
			t, ok := v.(*tensor.Dense)
			if err != nil || !ok || t.Dtype() != tensor.Float32 {
				return report.TableData{}, fmt.Errorf("init scale: node %s holds %T (%v), want a float32 tensor", n.Name(), v, err)
			}
			var ss float64
			for _, f := range t.Float32s() {
				ss += float64(f) * float64(f)
			}
			row = append(row, math.Sqrt(ss/float64(len(t.Float32s()))))
			r.Set(fmt.Sprintf("init_rms.%s.%d", a.Name(), k+1), row[k+1])
		}
		m.Close()
		// The geometric mean of the ratios between consecutive hidden layers.
		f := math.NaN()
		if c.Layers > 1 {
			f = math.Pow(row[c.Layers].(float64)/row[1].(float64), 1/float64(c.Layers-1))
		}
		r.Set("init_rms."+a.Name()+".factor", f)
		rows = append(rows, append(row, f))
	}
	return report.TableData{Header: append(header, "logits", "factor per layer"), Rows: rows}, nil
}

// tables fills the results at the end of training: the activations in
// order, the tables of final values and of the learning-rate choice,
// curves.csv, and the summary values of the reported settings.
func tables(r *report.Report, c config, d *data, res *results, pg *page) {
	tk := c.trainKey()
	for _, o := range c.Opts {
		for _, by := range []struct {
			what   string
			metric string
			get    func(*group, string) []float64
			scale  float64
		}{{"final test error (%)", "test_error", (*group).Final, 100}, {"mean training loss over the run", tk, (*group).Mean, 1}} {
			gs := slices.Clone(res.Best)
			gs = slices.DeleteFunc(gs, func(g *group) bool { return g.Setting.Opt != o })
			med := func(g *group) float64 { return by.scale * experiment.Median(by.get(g, by.metric)) }
			slices.SortStableFunc(gs, func(x, y *group) int { return cmpNaNLast(med(x), med(y)) })
			var parts []string
			for _, g := range gs {
				parts = append(parts, g.Setting.Act.Title()+" "+report.Format(med(g)))
			}
			pg.Orders = append(pg.Orders, fmt.Sprintf("%s, %s: %s", c.optLabel(o), by.what, strings.Join(parts, ", ")))
		}
	}
	pg.FinalTestError.Header = []string{"activation"}
	for _, o := range c.Opts {
		pg.FinalTestError.Header = append(pg.FinalTestError.Header, c.optLabel(o)+": test error (%), median", c.optLabel(o)+": min–max")
	}
	for _, a := range c.Acts {
		row := []any{a.Title()}
		for _, o := range c.Opts {
			s := experiment.Summarize(best(res, o, a).Final("test_error"))
			row = append(row, 100*s.Median, s.Range(100))
		}
		pg.FinalTestError.Rows = append(pg.FinalTestError.Rows, row)
	}
	pg.Final.Header = []string{"optimizer", "activation", "lr", "final train loss", "final train loss, min–max",
		"mean train loss over the run", "mean train loss, min–max", "test error (%)", "validation error (%)", "diverged runs"}
	for _, g := range res.Best {
		p := fmt.Sprintf("%s.%s.", g.Setting.Opt, g.Setting.Act.Name())
		r.Set(p+"lr", g.Setting.LR)
		r.Set(p+"diverged", g.Diverged())
		for _, m := range metrics {
			if s := experiment.Summarize(g.Final(m)); s.N > 0 {
				s.Set(r, p+"final."+m)
			}
		}
		tl, ml := experiment.Summarize(g.Final(tk)), experiment.Summarize(g.Mean(tk))
		ml.Set(r, p+"mean_train_loss")
		pg.Final.Rows = append(pg.Final.Rows, []any{c.optLabel(g.Setting.Opt), g.Setting.Act.Title(), fmt.Sprint(g.Setting.LR), tl.Median, tl.Range(1),
			ml.Median, ml.Range(1), 100 * experiment.Median(g.Final("test_error")), 100 * experiment.Median(g.Final("val_error")), g.Diverged()})
	}
	if len(res.Groups) > len(res.Best) {
		pg.LRSelection.Header = []string{"optimizer", "activation", "lr", "validation error (%)", "validation loss", "chosen"}
		for _, g := range res.Groups {
			pg.LRSelection.Rows = append(pg.LRSelection.Rows, []any{c.optLabel(g.Setting.Opt), g.Setting.Act.Title(), fmt.Sprint(g.Setting.LR),
				100 * experiment.Median(g.Final("val_error")), experiment.Median(g.Final("val_loss")), slices.Contains(res.Best, g)})
		}
	}
	for _, run := range res.Runs {
		if run.Diverged != "" {
			pg.Diverged = append(pg.Diverged, run)
		}
	}
	pg.Curves, _ = r.Capture(func() error {
		return experiment.WriteBands(r, "curves", res.Groups, []string{"activation", "optimizer", "lr", "selected", "step", "epoch"},
			func(g *group, step int) []any {
				return []any{g.Setting.Act.Name(), g.Setting.Opt, g.Setting.LR, slices.Contains(res.Best, g), step, float64(step) / float64(d.stepsPerEpoch)}
			})
	})
}

// cmpNaNLast orders numbers ascending with NaN (all runs diverged) last.
func cmpNaNLast(x, y float64) int {
	if math.IsNaN(x) || math.IsNaN(y) {
		return cmp.Compare(b2i(math.IsNaN(x)), b2i(math.IsNaN(y)))
	}
	return cmp.Compare(x, y)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// plots draws the training loss and the test error of every activation
// with opt against epochs: medians over seeds, shaded from min to max.
func plots(c config, d *data, res *results, opt string) []namedPlot {
	what := "the mean mini-batch training loss since the previous evaluation"
	if c.Dropout > 0 {
		what = "the training loss with dropout off (fixed 5000-image training subset)"
	}
	epoch := func(step int) float64 { return float64(step) / float64(d.stepsPerEpoch) }
	var out []namedPlot
	for _, p := range []struct {
		name, title, ylabel, key, what string
		scale                          float64
	}{
		{"train_loss_" + opt, "Training loss, " + c.optLabel(opt), "cross-entropy (nats)", c.trainKey(), what, 1},
		{"test_error_" + opt, "Test error, " + c.optLabel(opt), "test error (%)", "test_error", "the error on the test images at that moment", 100},
	} {
		var series []report.Series
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, a := range c.Acts {
			g := best(res, opt, a)
			s := g.Band(p.key).Scale(p.scale).Series(fmt.Sprintf("%s (lr %g)", a.Title(), g.Setting.LR), epoch)
			s.Dashed = a == activation.GELUTanh
			series = append(series, s)
			for _, v := range slices.Concat(s.Y, s.Lo, s.Hi) {
				if v > 0 && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		// A log axis helps over more than a factor of 30; over less its
		// ticks (powers of ten only) would leave one label or none.
		out = append(out, namedPlot{Name: p.name, Caption: p.what, Spec: report.PlotSpec{Title: p.title, XLabel: "epoch", YLabel: p.ylabel,
			Series: series, LogY: hi > 30*lo, DPI: c.DPI}})
	}
	return out
}

// alongTheWay tabulates the medians at every evaluation (at most about 12
// rows: later ones are thinned to epoch ends).
func alongTheWay(c config, d *data, res *results) (out []alongTable) {
	var steps []int
	stride := max(1, (c.Epochs+11)/12)
	for i, s := range d.evalSteps {
		epochEnd := s%d.stepsPerEpoch == 0
		if len(d.evalSteps) <= 12 || (epochEnd && (s/d.stepsPerEpoch)%stride == 0) || i == len(d.evalSteps)-1 {
			steps = append(steps, s)
		}
	}
	for _, o := range c.Opts {
		for _, t := range []struct {
			name, what, key string
			scale           float64
		}{{"curve_train_loss_" + o, "training loss", c.trainKey(), 1}, {"curve_test_error_" + o, "test error (%)", "test_error", 100}} {
			tab := report.TableData{Header: []string{"epoch"}}
			for _, a := range c.Acts {
				tab.Header = append(tab.Header, a.Title())
			}
			for _, s := range steps {
				row := []any{float64(s) / float64(d.stepsPerEpoch)}
				for _, a := range c.Acts {
					b := best(res, o, a).Band(t.key)
					v := math.NaN() // every seed diverged before s
					if i, ok := slices.BinarySearch(b.Steps, s); ok {
						v = t.scale * b.Median[i]
					}
					row = append(row, v)
				}
				tab.Rows = append(tab.Rows, row)
			}
			out = append(out, alongTable{t.name, c.optLabel(o), t.what, tab})
		}
	}
	return out
}
