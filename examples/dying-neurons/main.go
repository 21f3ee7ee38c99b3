// Dying-neurons checks the documents' dying-ReLU argument (shared/seeds/000)
// in two parts, and writes report.md (the claims with verdicts, tables,
// plots), summary.json, the tables as CSV and the plots as PNG to -out.
//
// (a) The single neuron L = ½(a(w·x + b) − t)² at z = −1 (probe.Neuron):
// ∂L/∂w through the graph against (a(z) − t)·a'(z)·x for every activation,
// then gradient descent from z = −3, −1, −0.5.
//
// (b) An MLP on MNIST (784 → -hidden → 10, float32) trained with SGD and
// heavy-ball momentum for every activation × learning rate × bias init,
// counting every -probe-every steps the units dead on -probe-n held-out
// training images (probe.DeadProbe: |f'(z)| ≤ -tol on every one). All runs
// start from the same weights; only the biases differ between bias inits.
//
//	go run ./examples/dying-neurons                 # defaults: 45 runs, about half a minute on 2 cores
//	go run ./examples/dying-neurons -acts relu,gelu -lrs 0.1 -bias default,-3 -steps 2000
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/mlpnet"
	"io"
	"maps"
	"os"
	"runtime"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// config is everything a run depends on; the same config gives identical
// files. -seed is the seed of the weights, the train/validation split, the
// batch order and the -train-n/-test-n subsets.
type config struct {
	experiment.Flags                      // -out, -seed, -workers, -train-n, -test-n
	experiment.MNISTMLP                   // -mnist, -acts, -hidden, -batch, -momentum, -dpi
	LRs                 experiment.Floats `flag:"lrs" help:"learning rates, comma-separated" check:"nonempty,positive"`
	Biases              experiment.Inits  `flag:"bias" help:"bias initializations, comma-separated: default (PyTorch's U(±1/√in)) or a constant" check:"nonempty"`
	NeuronSteps         int               `flag:"neuron-steps" help:"gradient-descent steps on the single neuron of part (a)" check:"positive"`
	Steps               int               `flag:"steps" help:"optimizer steps per run" check:"positive"`
	ProbeEvery          int               `flag:"probe-every" help:"count dead units every this many steps" check:"positive"`
	ProbeN              int               `flag:"probe-n" help:"validation examples the dead units are counted on" check:"positive"`
	Tol                 float64           `flag:"tol" help:"a unit is dead when |f'(z)| ≤ tol on every probe example" check:"min=0,below=1"`
	Progress            io.Writer         // where progress lines go (nil: nowhere)
	Args                []string          // the command line shown in report.md
}

func main() {
	c := config{Flags: experiment.Flags{Out: "out/dying-neurons", Seed: 1, Workers: runtime.NumCPU()}, Args: os.Args, Progress: os.Stderr,
		MNISTMLP: experiment.MNISTMLP{Acts: experiment.Activations{activation.ReLU, activation.GELU, activation.SiLU, activation.ELU, activation.Softplus},
			Hidden: experiment.Ints{128, 128}, Batch: 64, Momentum: 0.9, DPI: 144},
		LRs: experiment.Floats{0.1, 0.3, 0.5}, Biases: experiment.Inits{"default", "-1", "-3"},
		NeuronSteps: 500, Steps: 600, ProbeEvery: 25, ProbeN: 1000, Tol: probe.DefaultDeadTol}
	experiment.Main("dying-neurons", &c.Flags, experiment.SubsetFlag, &c, func(ctx context.Context) error { _, err := run(ctx, c); return err })
}

// run is the whole program: part (a), the sweep of part (b), the claims,
// then report.md.
func run(ctx context.Context, c config) ([]*runResult, error) {
	if err := errors.Join(experiment.CheckFlags(c), c.Flags.Check(experiment.SubsetFlag)); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Dying neurons: ReLU, GELU and the others", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	pg := newPage(c)
	if err := singleNeuron(r, pg); err != nil { // (a)
		return nil, err
	}
	runs, err := sweep(ctx, c) // (b)
	if err == nil {
		err = sweepReport(r, runs, pg)
	}
	if err == nil {
		err = claims(r, runs, pg)
	}
	if err != nil {
		return nil, err
	}
	return runs, r.Finish(reportTmpl, pg, files)
}

// The single neuron's input and target, and gradient descent's settings.
// The documents fix only z = −1; t = 1 asks the neuron to raise its
// output, which needs z > 0 for every activation here.
const neuronX, neuronW, neuronT, neuronLR = 1.5, -1.0, 1.0, 0.1

var neuronStarts = []float64{-3, -1, -0.5}

// singleNeuron compares the graph's ∂L/∂w at z = −1 with the analytic
// (a(z) − t)·a'(z)·x, in float64 and float32, then trains the neuron by
// plain gradient descent from each start, for every activation.
func singleNeuron(r *report.Report, pg *page) error {
	for _, a := range activation.All() {
		n, err := probe.StudyNeuron(a, neuronX, neuronW, -1, neuronT, neuronLR, pg.NeuronSteps, neuronStarts, tensor.Float64, tensor.Float32)
		if err != nil {
			return err
		}
		r.SetAll("neuron."+a.Key()+".", n.GradValues())
		r.Set("neuron."+a.Key()+".d1_at_m1", a.Deriv(-1))
		r.SetAll("descent."+a.Key()+".", n.DescentValues())
		pg.NeuronGradient.Rows = append(pg.NeuronGradient.Rows, append([]any{a.Title()}, n.GradCells()...))
		for i, z0 := range neuronStarts {
			pg.NeuronDescent.Rows = append(pg.NeuronDescent.Rows, append([]any{a.Title()}, n.DescentCells(i)...))
			// The plot shows GELU from every start and the other activations
			// (without GELU's approximations) from −1.
			if a == activation.GELU || (z0 == -1 && (a == activation.ReLU || a == activation.SiLU || a == activation.ELU || a == activation.Softplus)) {
				s := n.Descents[i].Series(fmt.Sprintf("%s from %g", a.Title(), z0))
				s.Dashed = a != activation.GELU && a != activation.ReLU
				pg.DescentPlot.Series = append(pg.DescentPlot.Series, s)
			}
		}
	}
	return nil
}

// setting is one training run of the sweep; its name is the run's in
// summary keys: "gelu.lr_0.1.bias_-3".
type setting struct {
	Act  activation.Activation
	LR   float64
	Bias string // "default" (PyTorch's U(±1/√in)) or a constant
}

func (s setting) name() string { return fmt.Sprintf("%s.lr_%g.bias_%s", s.Act.Key(), s.LR, s.Bias) }

type runResult = experiment.Run[setting]

// What a run records at every probe (Run.Curve): the mean training loss
// since the previous probe (NaN at step 0), then the dead units
// (probe.DeadMetrics). And at its end (Run.Values: the last step, or the
// last probe before a divergence): test accuracy (NaN if it diverged) and
// DeadProbe.EndValues.
const accuracy = "accuracy"

// sweep trains every setting, c.Workers at a time.
func sweep(ctx context.Context, c config) ([]*runResult, error) {
	full, test, err := c.MNISTSubsets(c.MNIST)
	if err != nil {
		return nil, err
	}
	tr, val, err := full.Split(1.0/12, c.Seed) // 55 000 / 5 000 of all 60 000
	if err != nil {
		return nil, err
	}
	probeSet, err := experiment.First(val, c.ProbeN)
	if err != nil {
		return nil, fmt.Errorf("-probe-n %d, from the validation split: %w", c.ProbeN, err)
	}
	grid := experiment.Grid[setting]{Seeds: []uint64{c.Seed}, Name: setting.name, Workers: c.Workers, Progress: c.Progress,
		Metrics: append([]string{"train_loss"}, probe.DeadMetrics(len(c.Hidden))...),
		Note: func(r *runResult) string {
			return fmt.Sprintf("dead %.1f%% → %.1f%%, test accuracy %.2f%%", 100*r.Curve.First("dead_fraction"), 100*r.Curve.Last("dead_fraction"), 100*r.Values[accuracy])
		}}
	grid.Settings = experiment.Product3(c.Biases, c.LRs, c.Acts, func(b string, lr float64, a activation.Activation) setting { return setting{a, lr, b} })
	return grid.Run(func(r *runResult) error { return trainOne(ctx, c, tr, probeSet, test, r) })
}

// trainOne trains one setting and probes it every c.ProbeEvery steps.
func trainOne(ctx context.Context, c config, trainSet, probeSet, test *datasets.Dataset, r *runResult) error {
	bias, err1 := experiment.ParseInit(r.Setting.Bias)
	model, mlp, err2 := mlpnet.Classifier(tensor.Float32, r.Seed, c.Batch, nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: r.Setting.Act, BiasInit: bias})
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	dead, err1 := probe.NewDeadProbe(model.Graph, mlp, probeSet, c.Tol)
	trainL, err2 := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: r.Seed, DropLast: true})
	testL, err3 := datasets.NewLoader(test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	onStep, err := mlpnet.ProbeSteps(c.ProbeEvery, c.Steps, func(step int, loss float64) error {
		if err := dead.Observe(); err != nil {
			return err
		}
		return r.Curve.Add(step, append([]float64{loss}, dead.Metrics()...)...)
	})
	if err != nil {
		return err
	}
	t, err := train.New(model, &optim.SGD{LearningRate: r.Setting.LR, Momentum: c.Momentum}, trainL, testL,
		train.Config{MaxSteps: c.Steps, EvalEvery: c.Steps, Quiet: true, OnStep: onStep})
	if err == nil { // the test accuracy after the last step
		err = r.TrainFinal(ctx, t, accuracy, func(e train.EvalInfo) float64 { return e.ValAccuracy })
	}
	if err == nil {
		maps.Copy(r.Values, dead.EndValues())
	}
	return err
}
