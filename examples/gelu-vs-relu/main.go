// Gelu-vs-relu trains the GELU paper's MNIST classifier (Hendrycks & Gimpel
// 2016, §3.1: eight hidden layers of 128 units, batch 128, Adam, weights
// with unit-norm rows, biases 0, optional dropout) with ReLU, GELU (exact
// and tanh form), ELU and SiLU, with Adam and with SGD + momentum, over
// paired seeds (seed s gives every setting the same initial weights and
// batch order), and checks the paper's and the documents' claims on
// training loss and test error. From the module root:
//
//	go run ./examples/gelu-vs-relu                  # 3 epochs × 5 seeds, 50 runs, about 2 minutes on 2 cores
//	go run ./examples/gelu-vs-relu -full -resume    # the paper's 50 epochs × 5 seeds (about 70 minutes)
//	go run ./examples/gelu-vs-relu -dropout 0.5     # the paper's second panel
//	go run ./examples/gelu-vs-relu -opts adam -adam-lr 1e-3,1e-4,1e-5   # the paper's learning-rate tuning
//
// It writes to -out report.md (the command, the claims with verdicts, the
// setup, tables, plots), summary.json (every number, keys in keys.txt),
// CSV tables, PNG plots, runs/<opt>/lr<rate>/<act>/seed<n>/ (each run's
// files) and timing.csv (the one file that differs between reruns). Five
// seeds is the fewest with which the sign test behind the verdicts can
// reach p < 0.05. On several machines sharing -out, each worker trains a
// shard of the grid (-shard i/n, a Slurm array task or a Kubernetes
// Indexed Job pod: cluster/ has both), and the last to finish, or a later
// -merge, writes the report one process would.
//
// This file reads top to bottom: flags, data, model, training (package
// train/experiment keeps the runs, resumes and aggregates them); report.go
// computes what report.md shows and checks the claims, report.md.tmpl
// says it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/mlpnet"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/dist"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// config is everything a run depends on; the same config gives
// byte-identical output (except timing.csv) on one machine and BLAS. The
// tagged fields are this program's own flags (experiment.BindFlags), the
// others come from the flags experiment programs share (experiment.Flags).
type config struct {
	Epochs        int                    `flag:"epochs" help:"passes over the training set per run (the paper: 50)" check:"positive"`
	Full          bool                   `flag:"full" help:"the paper's length: 50 epochs × 5 seeds (-epochs and -seeds given explicitly still win)"`
	Acts          experiment.Activations `flag:"acts" help:"comma-separated activations, as activation.ParseActivation names them" check:"nonempty"`
	Opts          experiment.Strings     `flag:"opts" help:"comma-separated optimizers: adam, sgd (SGD with momentum)" check:"nonempty"`
	AdamLR        experiment.Floats      `flag:"adam-lr" help:"Adam learning rate; a comma-separated list is tuned on the validation set" check:"positive"`
	SGDLR         experiment.Floats      `flag:"sgd-lr" help:"SGD learning rate; a comma-separated list is tuned on the validation set" check:"positive"`
	Momentum      float64                `flag:"momentum" help:"SGD momentum (heavy ball, PyTorch's convention)" check:"min=0,below=1"`
	Dropout       float64                `flag:"dropout" help:"dropout rate after every hidden activation (the paper: 0 and 0.5)" check:"min=0,below=1"`
	Val           int                    `flag:"val" help:"training examples held out as a validation set, for the learning-rate choice (the paper: 5000)" check:"min=0"`
	EvalsPerEpoch int                    `flag:"evals-per-epoch" help:"evaluations of the test and validation sets per epoch (the paper: 3)" check:"positive"`
	Layers        int                    `flag:"layers" help:"hidden layers" check:"positive"`
	Width         int                    `flag:"width" help:"units per hidden layer" check:"positive"`
	Batch         int                    `flag:"batch" help:"mini-batch size" check:"positive"`
	Quiet         bool                   `flag:"quiet" help:"print nothing but errors and the final line"`
	DPI           int                    `flag:"dpi" help:"resolution of the PNG plots in dots per inch" check:"min=0"`
	Dist          bool                   `flag:"dist" help:"train one run (one -opts, -acts, learning rate and seed) data-parallel over the processes of an MPI job (automatic under mpirun); see dist.go"`

	experiment.Flags // -out, -seed (seeds are Seed, Seed+1, …), -seeds, -workers, -resume, -train-n, -test-n, -shard, -merge

	Part experiment.Shard // this worker's part of the grid (-shard resolved; the zero Shard: all of it)
	Args []string         // the command line shown in report.md
}

// defaults are the flags' defaults: the paper's network and protocol,
// three epochs instead of fifty.
var defaults = config{Flags: experiment.Flags{Out: "out/gelu-vs-relu", Seed: 1, Seeds: 5, Workers: runtime.NumCPU()},
	Epochs: 3, Opts: experiment.Strings{"adam", "sgd"},
	Acts:   experiment.Activations{activation.ReLU, activation.GELU, activation.GELUTanh, activation.ELU, activation.SiLU},
	AdamLR: experiment.Floats{1e-3}, SGDLR: experiment.Floats{0.05}, Momentum: 0.9,
	Val: 5000, EvalsPerEpoch: 3, Layers: 8, Width: 128, Batch: 128, DPI: 144}

func main() {
	start := time.Now()
	c, err := parseFlags(flag.CommandLine, os.Args[1:], os.Getenv)
	var res *results
	if err == nil && (c.Dist || dist.Launched()) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		mainDist(ctx, c)
		stop()
		return
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		res, err = run(ctx, c)
		stop()
	}
	experiment.ExitGrid("gelu-vs-relu", c.Out, err, func() string {
		return fmt.Sprintf("wrote %s/report.md (%d runs, %s)", c.Out, len(res.Runs), time.Since(start).Round(time.Second))
	})
}

// flags are the shared flags this program takes (experiment.Flags).
const flags = experiment.SeedsFlag | experiment.ResumeFlag | experiment.SubsetFlag | experiment.ShardFlags

// parseFlags defines the program's flags on fs and parses args; getenv
// supplies a worker's shard when -shard is not given (a Slurm job array
// task, a Kubernetes Indexed Job pod).
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	c := defaults
	c.Args = experiment.Command(append([]string{fs.Name()}, args...))
	set, err := c.Flags.Parse(fs, args, flags, &c)
	if err != nil {
		return c, err
	}
	if c.Full && !set["epochs"] {
		c.Epochs = 50
	}
	if c.Full && !set["seeds"] {
		c.Seeds = 5
	}
	c.Part, err = c.ResolveShard(getenv)
	return c, err
}

func (c config) validate() error {
	err := errors.Join(experiment.CheckFlags(c), c.Flags.Check(flags))
	for _, o := range c.Opts {
		if o != "adam" && o != "sgd" {
			err = errors.Join(err, fmt.Errorf("-opts: unknown optimizer %q, want adam or sgd", o))
		} else if n := len(c.lrs(o)); n > 1 && c.Val == 0 {
			err = errors.Join(err, fmt.Errorf("-%s-lr lists %d learning rates: choosing one needs a validation set, but -val is 0", o, n))
		}
	}
	return err
}

// setting is what distinguishes the runs of one seed.
type setting struct {
	Opt string // "adam" or "sgd"
	LR  float64
	Act activation.Activation
}

// at matches the settings of optimizer opt and activation a.
func at(opt string, a activation.Activation) func(setting) bool {
	return func(s setting) bool { return s.Opt == opt && s.Act == a }
}

// name is the setting's folder under runs/: adam/lr0.001/gelu.
func (s setting) name() string {
	return path.Join(s.Opt, fmt.Sprintf("lr%g", s.LR), strings.ReplaceAll(s.Act.Name(), ":", "_"))
}

type (
	runResult = experiment.Run[setting]
	group     = experiment.Group[setting]
)

// results is what the tests check besides the files.
type results struct {
	Runs   []*runResult
	Groups []*group
	Best   []*group // per optimizer and activation, the learning rate reported
}

// run trains the grid (optimizer × learning rate × activation × seed) and
// writes the report.
func run(ctx context.Context, c config) (*results, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	// Each run records experiment.SplitMetrics: train_loss_nodrop is NaN
	// without -dropout, val_* with -val 0.
	grid := experiment.Grid[setting]{Name: setting.name, Metrics: experiment.SplitMetrics, Dir: filepath.Join(c.Out, "runs"), Resume: c.Resume,
		Workers: c.Workers, Shard: c.Part, Merge: c.Merge, Seeds: experiment.SeedRange(c.Seed, c.Seeds),
		Fingerprint: fmt.Sprintf("epochs=%d batch=%d layers=%d width=%d dropout=%g momentum=%g val=%d n-train=%d n-test=%d evals=%v blas=%s",
			c.Epochs, c.Batch, c.Layers, c.Width, c.Dropout, c.Momentum, c.Val, c.TrainN, c.TestN, d.EvalSteps, experiment.RunBLAS())}
	for _, o := range c.Opts {
		for _, a := range c.Acts {
			for _, lr := range c.lrs(o) {
				grid.Settings = append(grid.Settings, setting{o, lr, a})
			}
		}
	}
	grid.Progress, _ = c.Flags.Progress(c.Quiet, nil)
	res := &results{}
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainRun(ctx, c, d, r) }); err != nil {
		return nil, err
	}
	if err := experiment.WriteTiming(filepath.Join(c.Out, "timing.csv"), res.Runs); err != nil {
		return nil, err
	}
	// The paper's protocol: per optimizer and activation, the learning rate
	// with the lowest median final validation error (ties: loss), among
	// those with the fewest diverged runs.
	res.Groups = experiment.Groups(res.Runs)
	res.Best = experiment.Best(res.Groups, func(s setting) string { return s.Opt + " " + s.Act.Name() }, "val_error", "val_loss")
	if err := writeReport(c, d, res); err != nil {
		return nil, err
	}
	return res, nil
}

// data is what every run shares.
type data struct {
	experiment.Splits // TrainEval: with -dropout, a training subset scored with dropout off
	experiment.EpochPlan
}

func loadData(c config) (*data, error) {
	trainEval := 0
	if c.Dropout > 0 { // the paper plots the loss of the network without dropout
		trainEval = 5000
	}
	s, err := experiment.MNISTSplits(c.Flags, c.Val, c.Batch, trainEval)
	if err != nil {
		return nil, err
	}
	e, err := experiment.NewEpochPlan(s.Train.Len(), c.Batch, c.Epochs, c.EvalsPerEpoch)
	return &data{s, e}, err
}

// network builds the paper's MLP for activation a on a new graph, for
// batches of rows examples: weights with unit-norm rows (the output
// layer's too), biases 0. The inputs come
// after the MLP (mlpnet.InputsLast): a diverged run's message names
// the loss node by number.
func network(c config, d *data, a activation.Activation, seed uint64, dropout float64, rows int) (train.Model, *nn.MLP, error) {
	return mlpnet.Classifier(tensor.Float32, seed, rows, nn.MLPConfig{In: d.Train.Features, Hidden: slices.Repeat([]int{c.Width}, c.Layers),
		Out: d.Train.Classes, Activation: a, Dropout: dropout, WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()}, mlpnet.InputsLast())
}

// trainRun trains one run into r.Dir (experiment.TrainSplits): the
// trainer's own evaluation set is the test set; the validation split and,
// with dropout, a training subset seen without dropout are scored at every
// evaluation besides.
func trainRun(ctx context.Context, c config, d *data, r *runResult) error {
	model, _, err := network(c, d, r.Setting.Act, r.Seed, c.Dropout, c.Batch)
	if err != nil {
		return err
	}
	var opt optim.Optimizer = optim.NewAdam(r.Setting.LR)
	if r.Setting.Opt == "sgd" {
		opt = &optim.SGD{LearningRate: r.Setting.LR, Momentum: c.Momentum}
	}
	_, progress := c.Flags.Progress(c.Quiet, nil) // a run's progress bar: not with several at once
	return experiment.TrainSplits(ctx, r, model, opt, d.Splits, c.Batch, train.Config{Epochs: c.Epochs, EvalEvery: d.EvalEvery,
		Quiet: progress == nil, Progress: progress})
}
