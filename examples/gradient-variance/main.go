// Gradient-variance checks the documents' gradient-variance and
// momentum-variance argument (shared/seeds/000), and writes report.md (the
// claims with verdicts, tables, plots), summary.json, the tables as CSV
// and the plots as PNG to -out.
//
// 1. E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1), every activation.
// 2. For each of -acts, an MLP on MNIST (784 → -hidden → 10, float32,
// SGD with heavy-ball momentum -momentum) is measured in four phases:
//
//	init     weights frozen at the initialization (the same for every
//	         activation), -init-samples batches drawn with replacement:
//	         per-parameter gradient mean and variance
//	train    -train-steps steps at -lr: Σ_j Var(g_j) in blocks of -var-block steps
//	window   burn-in + -window steps at each of -window-lrs in turn:
//	         gradients and four shadow momentum buffers (EMA and heavy
//	         ball, β = 0.9 and 0.99) fed the same gradients (probe.Watch)
//	frozen   weights frozen after the windows, burn-in + -window batches
//	         drawn with replacement: independent gradients, same buffers
//
// The frozen phases satisfy the assumptions of the stationary formulas
// (independent, identically distributed gradients); the window shows how
// far they carry over to real training. Burn-in is the number of steps
// after which β^t ≤ -burn-eps for the largest β.
//
//	go run ./examples/gradient-variance              # defaults: about 2 min on 2 free cores
//	go run ./examples/gradient-variance -acts relu,gelu,silu -window 6000
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/mlpnet"
	"io"
	"os"
	"runtime"
	"text/template"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// config is everything a run depends on; the same config gives identical
// files. -seed is the seed of the weights, the batch order, the batches
// drawn with replacement and the -train-n/-test-n subsets; -workers is how
// many activations are measured at once, one BLAS thread each.
type config struct {
	experiment.Flags                      // -out, -seed, -workers, -train-n, -test-n
	experiment.MNISTMLP                   // -mnist, -acts, -hidden, -batch, -momentum (of the optimizer that trains), -dpi
	LR                  float64           `flag:"lr" help:"learning rate of the training phase" check:"min=0"`
	WindowLRs           experiment.Floats `flag:"window-lrs" help:"learning rates of the late windows, measured one after the other, comma-separated" check:"nonempty,min=0"`
	InitSamples         int               `flag:"init-samples" help:"gradient samples at the frozen initial weights" check:"min=2"`
	TrainSteps          int               `flag:"train-steps" help:"training steps before the window" check:"min=0"`
	Window              int               `flag:"window" help:"measured steps of the window and of the frozen phase (after burn-in)" check:"min=2"`
	Blocks              int               `flag:"blocks" help:"blocks the window is cut into for standard errors; must divide -window" check:"min=2"`
	VarBlock            int               `flag:"var-block" help:"training steps per gradient-variance point during training" check:"min=2"`
	UnitBatches         int               `flag:"unit-batches" help:"batches per phase over which the network's E[f'(z)²] is averaged" check:"positive"`
	BurnEps             float64           `flag:"burn-eps" help:"burn-in: skip the first t steps of each buffer, with β^t ≤ burn-eps" check:"positive,below=1"`
	Progress            io.Writer         // where progress lines go (nil: nowhere)
	Args                []string          // the command line shown in report.md
}

func main() {
	c := config{Flags: experiment.Flags{Out: "out/gradient-variance", Seed: 1, Workers: runtime.NumCPU()}, Args: os.Args, Progress: os.Stderr,
		MNISTMLP: experiment.MNISTMLP{Acts: experiment.Activations{activation.ReLU, activation.GELU}, Hidden: experiment.Ints{128, 128}, Batch: 64,
			Momentum: 0.9, DPI: 144},
		LR: 0.05, WindowLRs: experiment.Floats{0.005, 0.0005}, InitSamples: 1000, TrainSteps: 1500, Window: 3000, Blocks: 6,
		VarBlock: 100, UnitBatches: 50, BurnEps: 1e-4}
	experiment.Main("gradient-variance", &c.Flags, experiment.SubsetFlag, &c, func(context.Context) error { _, err := run(c); return err })
}

//go:embed report.md.tmpl keys.txt
var files embed.FS

var reportTmpl = template.Must(report.ParseTemplateFS(files))

// run is the whole program: section 1, the measurements of sections 2 and
// 3, the claims, then report.md.
func run(c config) (acts []*actResult, err error) {
	err = errors.Join(experiment.CheckFlags(c), c.Flags.Check(experiment.SubsetFlag))
	if c.Blocks > 0 && c.Window%c.Blocks != 0 {
		err = errors.Join(err, fmt.Errorf("-window %d -blocks %d: want blocks dividing the window", c.Window, c.Blocks))
	}
	if err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Gradient variance and momentum variance", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	pg := &page{config: c, R: r}
	if err := derivStats(r, pg); err != nil { // 1
		return nil, err
	}
	if acts, err = measureAll(c); err != nil { // 2 and 3
		return nil, err
	}
	// An activation whose training diverged has no later phases: sections
	// 2 and 3 show the others, and the report says where it stopped.
	var done []*actResult
	for _, a := range acts {
		if a.Diverged == "" {
			done = append(done, a)
		} else {
			pg.Diverged = append(pg.Diverged, a)
		}
	}
	if len(done) > 0 {
		momentumReport(r, done, pg) // 2
		gradientReport(r, done, pg) // 3
	}
	claims(r, done, pg) // at the top of report.md
	return acts, r.Finish(reportTmpl, pg, files)
}

// buffers are the momentum buffers every phase watches.
var buffers = []probe.Buffer{{Form: probe.EMA, Beta: 0.9}, {Form: probe.HeavyBall, Beta: 0.9}, {Form: probe.EMA, Beta: 0.99}, {Form: probe.HeavyBall, Beta: 0.99}}

// burnIn is the steps after which every buffer has forgotten its start.
func burnIn(c config) int { return probe.SlowestBurnIn(buffers, c.BurnEps) }

// actResult is everything measured for one activation.
type actResult struct {
	Act      activation.Activation
	Phases   []probe.Summary      // init, one per window, frozen
	Train    probe.VarianceBlocks // in blocks of config.VarBlock training steps
	Accuracy float64              // test accuracy after the last window
	// A NaN or infinite loss, gradient or weight stops the measurement:
	// Diverged is the error, in phase DivergedPhase ("train" or a window)
	// at its step DivergedStep (from 1, burn-in included); Phases then
	// lack that phase and the later ones, Train and Accuracy are unset.
	Diverged, DivergedPhase string
	DivergedStep            int
}

// measureAll measures every activation, c.Workers at a time (a grid of
// one seed, which also fixes the BLAS threads); each has its own graph and
// streams, so the results do not depend on scheduling.
func measureAll(c config) ([]*actResult, error) {
	train, test, err := c.MNISTSubsets(c.MNIST)
	if err != nil {
		return nil, err
	}
	return experiment.Each(c.Acts, activation.Activation.Name, c.Seed, c.Workers, func(a activation.Activation) (*actResult, error) {
		return measureAct(c, train, test, a)
	})
}

// measureAct runs the four phases for activation a.
func measureAct(c config, train, test *datasets.Dataset, a activation.Activation) (*actResult, error) {
	note := experiment.Stopwatch(c.Progress, a.String())
	model, mlp, err := mlpnet.Classifier(tensor.Float32, c.Seed, c.Batch, nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: a})
	if err != nil {
		return nil, err
	}
	net, units, err := probe.NewMLPNet(model, mlp)
	if err != nil {
		return nil, err
	}
	res := &actResult{Act: a}
	// diverged records a divergence (experiment.Diverged) in phase name,
	// which ends the measurement.
	diverged := func(name string, err error) (*actResult, error) {
		var se *probe.StepError
		if errors.As(err, &se) {
			res.DivergedStep = se.Step
		}
		res.Diverged, res.DivergedPhase = err.Error(), name
		note(fmt.Sprintf("diverged in %s at step %d", name, res.DivergedStep))
		return res, nil
	}
	// watch measures burn + steps steps with the buffers (none: gradients
	// only), and the network's f'(z) on the first unit-batches steps.
	watch := func(name string, next probe.Stream, steps, burn int, bufs []probe.Buffer, opt optim.Optimizer) error {
		s, err := net.Measure(next, probe.Phase{Name: name, Steps: steps, Burn: burn, BlockLen: c.Window / c.Blocks, Buffers: bufs, Opt: opt,
			Units: units, UnitSteps: c.UnitBatches})
		if err == nil {
			res.Phases = append(res.Phases, s)
		}
		note(name)
		return err
	}
	// Frozen phases draw batches with replacement from streams shared by
	// all activations, so that their gradients are paired batch by batch.
	initS, err1 := probe.NewSampler(train, c.Batch, tensor.Float32, c.Seed, "init")
	frozenS, err2 := probe.NewSampler(train, c.Batch, tensor.Float32, c.Seed, "frozen")
	l, err3 := datasets.NewLoader(train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	tl, err4 := datasets.NewLoader(test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	if err := watch("init", initS.Stream(), c.InitSamples, 0, nil, nil); err != nil {
		return nil, err
	}
	next, opt := probe.LoaderStream(l), &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}
	// Training: Σ_j Var(g_j) and the mean loss in blocks of c.VarBlock steps.
	if res.Train, err = net.TrainVariance(next, c.TrainSteps, c.VarBlock, opt); err != nil {
		if experiment.Diverged(err) {
			return diverged("train", err)
		}
		return nil, fmt.Errorf("training: %w", err)
	}
	note("train")
	for _, lr := range c.WindowLRs {
		opt.SetLR(lr)
		name := fmt.Sprintf("window_lr%g", lr)
		if err := watch(name, next, c.Window, burnIn(c), buffers, opt); experiment.Diverged(err) {
			return diverged(name, err)
		} else if err != nil {
			return nil, err
		}
	}
	if res.Accuracy, err = net.Accuracy(tl); err != nil {
		return nil, err
	}
	note(fmt.Sprintf("test accuracy %.4f", res.Accuracy))
	return res, watch("frozen", frozenS.Stream(), c.Window, burnIn(c), buffers, nil)
}
