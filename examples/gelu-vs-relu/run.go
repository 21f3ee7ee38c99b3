package main

// The experiment: the data every run shares, the network, one training run,
// and the grid of runs (optimizer × learning rate × activation × seed).

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// setting is what distinguishes the runs of one seed.
type setting struct {
	Opt string // "adam" or "sgd"
	LR  float64
	Act activation.Activation
}

// name is the setting's folder under runs/: adam/lr0.001/gelu.
func (s setting) name() string {
	return path.Join(s.Opt, fmt.Sprintf("lr%g", s.LR), strings.ReplaceAll(s.Act.Name(), ":", "_"))
}

type (
	runResult = experiment.Run[setting]
	group     = experiment.Group[setting]
)

// metrics are what each run records at every evaluation: losses are mean
// cross-entropies in nats, errors fractions. train_loss is the mean
// mini-batch loss since the evaluation before (dropout on, if any);
// train_loss_nodrop the loss on a fixed training subset with dropout off
// (NaN without -dropout); val_* the held-out split (NaN with -val 0).
var metrics = []string{"train_loss", "train_loss_nodrop", "val_loss", "val_error", "test_loss", "test_error"}

// results is what the tests check besides the files.
type results struct {
	Runs    []*runResult
	Groups  []*group
	Best    []*group // per optimizer and activation, the learning rate reported
	Elapsed time.Duration
}

// data is what every run shares.
type data struct {
	train, val, test, trainEval *datasets.Dataset
	stepsPerEpoch, evalEvery    int
	evalSteps                   []int // where train.Trainer evaluates
}

func run(c config) (*results, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	start := time.Now()
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	grid := experiment.Grid[setting]{Name: setting.name, Metrics: metrics, Dir: filepath.Join(c.Out, "runs"), Resume: c.Resume,
		Workers: c.Workers, Shard: c.Shard, Merge: c.Merge, Fingerprint: fmt.Sprintf("epochs=%d batch=%d layers=%d width=%d dropout=%g momentum=%g val=%d n-train=%d n-test=%d evals=%v blas=%s",
			c.Epochs, c.Batch, c.Layers, c.Width, c.Dropout, c.Momentum, c.Val, c.NTrain, c.NTest, d.evalSteps, experiment.RunBLAS())}
	for _, o := range c.Opts {
		for _, a := range c.Acts {
			for _, lr := range c.lrs(o) {
				grid.Settings = append(grid.Settings, setting{o, lr, a})
			}
		}
	}
	for s := range c.Seeds {
		grid.Seeds = append(grid.Seeds, c.Seed+uint64(s))
	}
	if !c.Quiet {
		grid.Progress = c.Progress
	}
	res := &results{}
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainRun(c, d, r) }); err != nil {
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
	res.Elapsed = time.Since(start).Round(time.Second)
	return res, nil
}

func (c config) lrs(opt string) []float64 {
	if opt == "sgd" {
		return c.SGDLR
	}
	return c.AdamLR
}

func loadData(c config) (*data, error) {
	tr, te, err := experiment.MNIST("")
	if err != nil {
		return nil, err
	}
	d := &data{}
	subsets := experiment.Flags{Seed: c.Seed, TrainN: c.NTrain, TestN: c.NTest}
	if tr, d.test, err = subsets.Subsets(tr, te); err != nil {
		return nil, err
	}
	d.train = tr
	if c.Val > 0 {
		if c.Val >= tr.Len()-c.Batch {
			return nil, fmt.Errorf("-val %d leaves fewer than one batch of %d of the %d training images", c.Val, c.Batch, tr.Len())
		}
		if d.train, d.val, err = tr.Split(float64(c.Val)/float64(tr.Len()), c.Seed); err != nil {
			return nil, err
		}
	}
	if c.Dropout > 0 { // the paper plots the loss of the network without dropout
		if d.trainEval, err = experiment.Subset(d.train, min(5000, d.train.Len()), c.Seed, "train-eval"); err != nil {
			return nil, err
		}
	}
	d.stepsPerEpoch = d.train.Len() / c.Batch
	if d.stepsPerEpoch == 0 {
		return nil, fmt.Errorf("%d training images make no batch of %d", d.train.Len(), c.Batch)
	}
	d.evalEvery = max(1, d.stepsPerEpoch/c.EvalsPerEpoch)
	for s := 1; s <= c.Epochs*d.stepsPerEpoch; s++ {
		if s%d.evalEvery == 0 || s%d.stepsPerEpoch == 0 {
			d.evalSteps = append(d.evalSteps, s)
		}
	}
	return d, nil
}

// network builds the paper's MLP for activation a on a new graph: weights
// with unit-norm rows (the output layer's too), biases 0.
func network(c config, d *data, a activation.Activation, seed uint64, dropout float64) (train.Model, *nn.MLP, error) {
	g, err := graph.New(tensor.Float32, seed)
	if err != nil {
		return train.Model{}, nil, err
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: d.train.Features, Hidden: slices.Repeat([]int{c.Width}, c.Layers),
		Out: d.train.Classes, Activation: a, Dropout: dropout, WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()})
	if err != nil {
		return train.Model{}, nil, err
	}
	x, _ := g.Input("x", c.Batch, d.train.Features)
	y, _ := g.Input("y", c.Batch)
	logits, err := mlp.Forward(x)
	if err != nil {
		return train.Model{}, nil, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification}, mlp, err
}

// trainRun trains one run into r.Dir. The trainer's own evaluation set is
// the test set; the validation split and, with dropout, a training subset
// seen without dropout are scored at every evaluation besides.
func trainRun(c config, d *data, r *runResult) error {
	model, _, err := network(c, d, r.Setting.Act, r.Seed, c.Dropout)
	if err != nil {
		return err
	}
	loader := func(ds *datasets.Dataset, shuffle bool) (*datasets.Loader, error) {
		if ds == nil {
			return nil, nil
		}
		return datasets.NewLoader(ds, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: shuffle, Seed: r.Seed, DropLast: shuffle})
	}
	trainL, err1 := loader(d.train, true)
	testL, err2 := loader(d.test, false)
	valL, err3 := loader(d.val, false)
	trainEvalL, err4 := loader(d.trainEval, false)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	score := func(t *train.Trainer, l *datasets.Loader) (loss, errRate float64, err error) {
		if l == nil {
			return math.NaN(), math.NaN(), nil
		}
		e, err := t.Evaluate(l)
		return e.Loss, 1 - e.Accuracy, err
	}
	var opt optim.Optimizer = optim.NewAdam(r.Setting.LR)
	if r.Setting.Opt == "sgd" {
		opt = &optim.SGD{LearningRate: r.Setting.LR, Momentum: c.Momentum}
	}
	t, err := train.New(model, opt, trainL, testL, train.Config{Epochs: c.Epochs, EvalEvery: d.evalEvery, Dir: r.Dir,
		Quiet: c.Quiet || c.Workers > 1, Progress: c.Progress,
		OnEval: func(t *train.Trainer, e train.EvalInfo) error {
			valLoss, valErr, err := score(t, valL)
			if err != nil {
				return err
			}
			noDrop, _, err := score(t, trainEvalL)
			if err != nil {
				return err
			}
			return r.Curve.Add(e.Step, e.TrainLoss, noDrop, valLoss, valErr, e.ValLoss, 1-e.ValAccuracy)
		}})
	if err != nil {
		return err
	}
	return r.Train(t) // a divergence is a result: r.Diverged
}
