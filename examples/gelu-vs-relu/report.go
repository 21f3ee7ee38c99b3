package main

// report.md and summary.json: the numbers, tables, plots and claims
// report.md.tmpl shows, computed from the runs. The words are all in the
// template.

import (
	"embed"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/mlpnet"
	"slices"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

//go:embed report.md.tmpl keys.txt
var files embed.FS

var reportTmpl = template.Must(report.ParseTemplateFS(files))

const paperEpochs, paperSeeds = 50, 5

// alpha is the sign test's level for a verdict.
const alpha = 0.05

// page is what report.md.tmpl shows besides the claims.
type page struct {
	config
	*data
	PaperEpochs, PaperSeeds int
	Work                    float64           // the paper's epochs × seeds over this run's
	Labels                  map[string]string // per optimizer: "Adam", "SGD, momentum 0.9"
	Setup, InitRMS          report.TableData
	Orders                  []order
	FinalTestError, Final   report.TableData
	LRSelection             report.TableData // empty unless a learning rate was chosen
	All, Diverged           []*runResult
	Curves                  string // curves.csv's link
	Plots                   []figure
	Alpha                   float64
	MinSeeds                int
	BLAS                    string
}

// order is one optimizer's reported settings, best first.
type order struct {
	Opt             string
	ByTest, ByTrain []experiment.Ranked[setting] // final test error (%), mean training loss
}

// figure is one quantity at one optimizer: every activation's median
// curve over seeds, plotted, and tabulated at about 12 evaluations.
type figure struct {
	Name, Opt     string // Opt: the optimizer's label
	Seeds         int
	Error, NoDrop bool // the test error; the training loss with dropout off
	Spec          report.PlotSpec
	Unplotted     []string // lines left out: every run diverged before its first evaluation
	T             report.TableData
}

// view is the page seen from one optimizer and comparison, for the named
// templates of a label or a claim.
type view struct {
	*page
	Opt   string
	Exact bool                // the claim is about exact GELU (else its tanh form)
	V     experiment.Versus   // the comparison
	Vs    []experiment.Versus // or several
}

func (p *page) LastSeed() uint64                   { return p.Seed + uint64(p.Seeds) - 1 }
func (p *page) Short() bool                        { return p.Epochs < p.PaperEpochs || p.Seeds < p.PaperSeeds }
func (p *page) OptLabel(opt string) string         { return p.Labels[opt] }
func (p *page) StepsPerRun() int                   { return p.Epochs * p.PerEpoch }
func (p *page) Has(opt string) bool                { return slices.Contains(p.Opts, opt) }
func (p *page) FirstActs() []activation.Activation { return p.Acts[:len(p.Acts)-1] }
func (p *page) LastAct() activation.Activation     { return p.Acts[len(p.Acts)-1] }

func (c config) lrs(opt string) []float64 {
	if opt == "sgd" {
		return c.SGDLR
	}
	return c.AdamLR
}

// trainKey is the training-loss metric the comparisons use: the paper's
// loss without dropout when dropout is on.
func (c config) trainKey() string {
	if c.Dropout > 0 {
		return "train_loss_nodrop"
	}
	return "train_loss"
}

func writeReport(c config, d *data, res *results) error {
	r, err := report.NewFromTemplate(c.Out, reportTmpl, nil, report.WithCommand(c.Args...))
	if err != nil {
		return err
	}
	pg := &page{config: c, data: d, PaperEpochs: paperEpochs, PaperSeeds: paperSeeds, Work: float64(paperEpochs*paperSeeds) / float64(c.Epochs*c.Seeds),
		Labels: map[string]string{}, All: res.Runs, Alpha: alpha, MinSeeds: experiment.MinPairs(alpha), BLAS: gemm.Name()}
	for _, o := range c.Opts {
		if pg.Labels[o], err = report.Render(reportTmpl, "optimizer", view{page: pg, Opt: o}); err != nil {
			return err
		}
	}
	if pg.Setup, err = report.RenderTable(reportTmpl, "setup", pg); err != nil {
		return err
	}
	// The root mean square of each hidden layer's pre-activations (and of
	// the logits) in the untrained network, seed c.Seed, on the first
	// training batch of epoch 0.
	x, err := mlpnet.FirstBatch(d.Train, c.Batch, c.Seed)
	if err != nil {
		return err
	}
	if pg.InitRMS, err = mlpnet.InitRMS(r, "init_rms", c.Acts.Names(), c.Acts.Titles(), c.Layers, x, func(i int) (train.Model, *nn.MLP, error) {
		return network(c, d, c.Acts[i], c.Seed, 0, c.Batch)
	}); err != nil {
		return err
	}
	tables(r, c, d, res, pg)
	claims(r, pg, res)
	r.SetValues("config.", map[string]any{"epochs": c.Epochs, "seeds": c.Seeds, "first_seed": int(c.Seed), "batch": c.Batch,
		"layers": c.Layers, "width": c.Width, "dropout": c.Dropout, "momentum": c.Momentum, "train_examples": d.Train.Len(),
		"test_examples": d.Test.Len(), "val_examples": c.Val, "steps_per_epoch": d.PerEpoch, "eval_steps": d.EvalSteps,
		"blas": gemm.Name(), "activations": c.Acts.Names(), "optimizers": []string(c.Opts), "adam_lr": []float64(c.AdamLR),
		"sgd_lr": []float64(c.SGDLR)})
	return r.Finish(reportTmpl, pg, files)
}

// tables fills the results at the end of training: per optimizer the
// activations in order and the plots (below), the tables of final values
// and of the learning-rate choice, curves.csv, and the summary values of
// the reported settings.
func tables(r *report.Report, c config, d *data, res *results, pg *page) {
	tk := c.trainKey()
	testErr := func(g *group) []float64 { return g.Final("test_error") }
	meanTrain := func(g *group) []float64 { return g.Mean(tk) }
	var labels []string
	for _, o := range c.Opts {
		gs := experiment.Only(res.Best, func(s setting) bool { return s.Opt == o })
		pg.Orders = append(pg.Orders, order{o, experiment.RankByMedian(gs, testErr, 100), experiment.RankByMedian(gs, meanTrain, 1)})
		labels = append(labels, pg.Labels[o])
		plots(c, d, gs, pg, o)
	}
	pg.FinalTestError = experiment.MedianPivot("activation", "test error (%)", c.Acts.Titles(), labels,
		func(i, j int) []float64 {
			return experiment.FindGroup(res.Best, at(c.Opts[j], c.Acts[i])).Final("test_error")
		}, 100)
	pg.Final = experiment.FinalTable[setting]{Header: []string{"optimizer", "activation", "lr", "final train loss", "final train loss, min–max",
		"mean train loss over the run", "mean train loss, min–max", "test error (%)", "validation error (%)", "diverged runs"},
		Key: func(s setting) string { return s.Opt + "." + s.Act.Name() }, Metrics: experiment.SplitMetrics,
		Values:    map[string]func(setting) any{"lr": func(s setting) any { return s.LR }},
		Summaries: map[string]func(*group) []float64{"mean_train_loss": meanTrain},
		Row: func(g *group) []any {
			tl, ml := experiment.Summarize(g.Final(tk)), experiment.Summarize(meanTrain(g))
			return []any{pg.Labels[g.Setting.Opt], g.Setting.Act.Title(), fmt.Sprint(g.Setting.LR), tl.Median, tl.Range(1),
				ml.Median, ml.Range(1), 100 * experiment.Median(g.Final("test_error")), 100 * experiment.Median(g.Final("val_error")), g.Diverged()}
		}}.Write(r, res.Best)
	pg.LRSelection = experiment.SelectionTable([]string{"optimizer", "activation", "lr", "validation error (%)", "validation loss"}, res.Groups, res.Best,
		func(g *group) []any {
			return []any{pg.Labels[g.Setting.Opt], g.Setting.Act.Title(), fmt.Sprint(g.Setting.LR), 100 * experiment.Median(g.Final("val_error")),
				experiment.Median(g.Final("val_loss"))}
		})
	pg.Diverged = experiment.DivergedRuns(res.Runs)
	pg.Curves, _ = r.Capture(func() error {
		return experiment.WriteBands(r, "curves", res.Groups, []string{"activation", "optimizer", "lr", "selected", "step", "epoch"},
			func(g *group, step int) []any {
				return []any{g.Setting.Act.Name(), g.Setting.Opt, g.Setting.LR, slices.Contains(res.Best, g), step, d.Epoch(step)}
			})
	})
}

// plots draws the training loss and the test error of every activation
// with optimizer o (its reported groups gs) against epochs: medians over
// seeds, shaded from min to max. The medians are tabulated too, at about
// 12 of the evaluations.
func plots(c config, d *data, gs []*group, pg *page, o string) {
	loss, errs := experiment.LossErrorPanels(gs, c.trainKey(), "test_error", d.Epoch, c.Acts.Titles(),
		func(g *group) string { return fmt.Sprintf("%s (lr %g)", g.Setting.Act.Title(), g.Setting.LR) },
		func(g *group) bool { return g.Setting.Act == activation.GELUTanh })
	spec := func(title, y string) report.PlotSpec {
		return report.PlotSpec{Title: title + ", " + pg.Labels[o], XLabel: "epoch", YLabel: y, DPI: c.DPI}
	}
	steps := experiment.ThinSteps(d.EvalSteps, d.PerEpoch, 12)
	pg.Plots = append(pg.Plots,
		figure{Name: "train_loss_" + o, Opt: pg.Labels[o], Seeds: c.Seeds, NoDrop: c.Dropout > 0,
			Spec: loss.Plot(spec("Training loss", "cross-entropy (nats)")), Unplotted: loss.Unplotted(), T: loss.Table("epoch", steps)},
		figure{Name: "test_error_" + o, Opt: pg.Labels[o], Seeds: c.Seeds, Error: true,
			Spec: errs.Plot(spec("Test error", "test error (%)")), Unplotted: errs.Unplotted(), T: errs.Table("epoch", steps)})
}

// claims checks the paper's and the source documents' claims about
// training against this run. Activations are compared seed by seed (seeds
// are paired) with a one-sided sign test (experiment.Compare): a claim "A
// is lower than B" is confirmed when A is lower in so many seeds that
// chance would do it with probability ≤ alpha (all 5 of 5 seeds, for
// instance), not confirmed when B is lower that often, and unclear
// otherwise — always the case with fewer than 5 seeds, whatever the
// medians say. The claims' words are the templates claim.* of
// report.md.tmpl.
func claims(r *report.Report, pg *page, res *results) {
	tk := pg.trainKey()
	cmp := experiment.Comparisons[setting]{Report: r, Groups: res.Best, Values: map[string]func(*group) []float64{
		"final_train_loss": func(g *group) []float64 { return g.Final(tk) },
		"mean_train_loss":  func(g *group) []float64 { return g.Mean(tk) },
		"final_test_error": func(g *group) []float64 { return g.Final("test_error") },
	}}
	// versus compares a with b at opt on the quantity key, recording the
	// sign test under compare.<opt>.<key>.<a>_vs_<b> unless record is false.
	versus := func(opt string, a, b activation.Activation, key string, scale float64, record bool) (experiment.Versus, bool) {
		k := ""
		if record {
			k = "compare." + opt + "." + key + "." + a.Name() + "_vs_" + b.Name()
		}
		return cmp.Compare(key, at(opt, a), at(opt, b), a.Title(), b.Title(), scale, k)
	}
	// The paper: GELU's median training log loss is the lowest, with Adam.
	for _, gelu := range []activation.Activation{activation.GELUTanh, activation.GELU} {
		for _, other := range []activation.Activation{activation.ReLU, activation.ELU} {
			if v, ok := versus("adam", gelu, other, "final_train_loss", 1, true); ok {
				r.ClaimBlock(reportTmpl, "claim.paper", view{page: pg, Opt: "adam", Exact: gelu == activation.GELU, V: v}, v.Verdict(alpha))
			}
		}
	}
	for _, opt := range pg.Opts {
		// doc 001: GELU converges faster than the other activations.
		w := view{page: pg, Opt: opt}
		var verdicts []report.Verdict
		for _, a := range pg.Acts {
			if strings.HasPrefix(a.Name(), "gelu") {
				continue
			}
			if v, ok := versus(opt, activation.GELU, a, "mean_train_loss", 1, true); ok {
				w.Vs, verdicts = append(w.Vs, v), append(verdicts, v.Verdict(alpha))
			}
		}
		if len(w.Vs) > 0 {
			r.ClaimBlock(reportTmpl, "claim.faster", w, experiment.Weakest(verdicts...))
		}
		// doc 004: GELU outperforms ReLU (said of NLP; here MNIST test error).
		if w.V, _ = versus(opt, activation.GELU, activation.ReLU, "final_test_error", 100, true); w.V.A != "" {
			r.ClaimBlock(reportTmpl, "claim.better", w, w.V.Verdict(alpha))
		}
		// doc 000: smoother GELU gradients make momentum updates steadier
		// and convergence faster.
		if w.V, _ = versus(opt, activation.GELU, activation.ReLU, "mean_train_loss", 1, false); w.V.A != "" && opt == "sgd" {
			r.ClaimBlock(reportTmpl, "claim.momentum", w, w.V.Verdict(alpha))
		}
	}
}
