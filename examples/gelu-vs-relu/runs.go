package main

// One training run (an activation, an optimizer with its learning rate, a
// seed) and the loop over all of them, with the data they share.

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// runKey names a run.
type runKey struct {
	Opt  string
	LR   float64
	Act  ops.Activation
	Seed uint64
}

func (k runKey) dir() string {
	return filepath.Join("runs", k.Opt, fmt.Sprintf("lr%g", k.LR), strings.ReplaceAll(k.Act.Name(), ":", "_"), fmt.Sprintf("seed%d", k.Seed))
}

// point is one evaluation. Losses are mean cross-entropies in nats, errors
// fractions; NaN where not measured or after a divergence.
type point struct {
	Step            int
	Epoch           float64 // Step / steps per epoch
	TrainLoss       float64 // mean mini-batch loss since the previous evaluation (dropout on, if any)
	TrainLossNoDrop float64 // loss on a fixed training subset with dropout off (only with -dropout)
	ValLoss, ValErr float64
	TestLoss        float64
	TestErr         float64
}

var pointCols = []string{"step", "epoch", "train_loss", "train_loss_nodrop", "val_loss", "val_error", "test_loss", "test_error"}

func (p point) cells() []any {
	return []any{p.Step, p.Epoch, p.TrainLoss, p.TrainLossNoDrop, p.ValLoss, p.ValErr, p.TestLoss, p.TestErr}
}

// runResult is a finished (or diverged) run.
type runResult struct {
	Key      runKey
	Points   []point // one per evaluation step of the plan, NaN-filled after a divergence
	Diverged string  // the error that stopped a diverged run, "" otherwise
	Seconds  float64 // wall-clock time; 0 when loaded by -resume
	Steps    int
	Resumed  bool
}

// data is what every run shares.
type data struct {
	train, val, test, trainEval *datasets.Dataset
	stepsPerEpoch, evalEvery    int
	evalSteps                   []int
}

// mnist keeps the decoded MNIST for later calls of run in one process
// (the tests); nothing writes into it.
var mnist struct {
	sync.Mutex
	train, test *datasets.Dataset
}

func loadData(c config) (*data, error) {
	mnist.Lock()
	if mnist.train == nil {
		var err error
		if mnist.train, mnist.test, err = datasets.MNIST(""); err != nil {
			mnist.Unlock()
			return nil, err
		}
	}
	tr, te := mnist.train, mnist.test
	mnist.Unlock()
	var err error
	pick := func(d *datasets.Dataset, n int, stream string) (*datasets.Dataset, error) {
		if n == 0 || n == d.Len() {
			return d, nil
		}
		if n > d.Len() {
			return nil, fmt.Errorf("-%s %d, but MNIST has %d such images", stream, n, d.Len())
		}
		idx := rng.New(c.Seed, stream).Perm(d.Len())[:n]
		slices.Sort(idx)
		return d.Subset(idx)
	}
	d := &data{}
	if tr, err = pick(tr, c.NTrain, "n-train"); err != nil {
		return nil, err
	}
	if d.test, err = pick(te, c.NTest, "n-test"); err != nil {
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
		if d.trainEval, err = pick(d.train, min(5000, d.train.Len()), "train-eval"); err != nil {
			return nil, err
		}
	}
	d.stepsPerEpoch = d.train.Len() / c.Batch
	if d.stepsPerEpoch == 0 {
		return nil, fmt.Errorf("%d training images make no batch of %d", d.train.Len(), c.Batch)
	}
	d.evalEvery = max(1, d.stepsPerEpoch/c.EvalsPerEpoch)
	for s := 1; s <= c.Epochs*d.stepsPerEpoch; s++ {
		if s%d.evalEvery == 0 || s%d.stepsPerEpoch == 0 { // where train.Trainer evaluates
			d.evalSteps = append(d.evalSteps, s)
		}
	}
	return d, nil
}

// plan lists every run: seeds outermost, so that an interrupted run has
// complete seeds, then optimizers, learning rates and activations.
func plan(c config) []runKey {
	var keys []runKey
	for s := range uint64(c.Seeds) {
		for _, o := range c.Opts {
			for _, lr := range c.lrs(o) {
				for _, a := range c.Acts {
					keys = append(keys, runKey{o, lr, a, c.Seed + s})
				}
			}
		}
	}
	return keys
}

func (c config) lrs(opt string) []float64 {
	if opt == "sgd" {
		return c.SGDLR
	}
	return c.AdamLR
}

func (c config) optimizer(k runKey) optim.Optimizer {
	if k.Opt == "sgd" {
		return &optim.SGD{LearningRate: k.LR, Momentum: c.Momentum}
	}
	return optim.NewAdam(k.LR)
}

// trainRun trains one run into dir (absolute). A run that diverges (a NaN
// or infinite loss, gradient or weight) is a result, not an error.
func trainRun(c config, d *data, k runKey, dir string) (*runResult, error) {
	g, err := graph.New(tensor.Float32, k.Seed)
	if err != nil {
		return nil, err
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: d.train.Features, Hidden: slices.Repeat([]int{c.Width}, c.Layers),
		Out: d.train.Classes, Activation: k.Act, Dropout: c.Dropout, WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()})
	if err != nil {
		return nil, err
	}
	x, err := g.Input("x", c.Batch, d.train.Features)
	if err != nil {
		return nil, err
	}
	y, err := g.Input("y", c.Batch)
	if err != nil {
		return nil, err
	}
	logits, err := mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	if err != nil {
		return nil, err
	}
	trainL, err := datasets.NewLoader(d.train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: k.Seed, DropLast: true})
	if err != nil {
		return nil, err
	}
	testL, err := datasets.NewLoader(d.test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return nil, err
	}
	// The validation split and, with dropout, a training subset seen
	// without dropout: scored at every evaluation besides the test set.
	var valL, trainEvalL *datasets.Loader
	if d.val != nil {
		if valL, err = datasets.NewLoader(d.val, datasets.LoaderConfig{BatchSize: c.Batch}); err != nil {
			return nil, err
		}
	}
	if d.trainEval != nil {
		if trainEvalL, err = datasets.NewLoader(d.trainEval, datasets.LoaderConfig{BatchSize: c.Batch}); err != nil {
			return nil, err
		}
	}
	res := &runResult{Key: k}
	model := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification}
	onEval := func(t *train.Trainer, e train.EvalInfo) error {
		if n := len(res.Points); n > 0 && res.Points[n-1].Step == e.Step {
			return nil // the trainer evaluates an epoch end twice when EvalEvery divides it
		}
		p := point{Step: e.Step, Epoch: float64(e.Step) / float64(d.stepsPerEpoch), TrainLoss: e.TrainLoss,
			TestLoss: e.ValLoss, TestErr: 1 - e.ValAccuracy, TrainLossNoDrop: math.NaN(), ValLoss: math.NaN(), ValErr: math.NaN()}
		var err error
		if valL != nil {
			if p.ValLoss, p.ValErr, err = score(t, valL); err != nil {
				return err
			}
		}
		if trainEvalL != nil {
			if p.TrainLossNoDrop, _, err = score(t, trainEvalL); err != nil {
				return err
			}
		}
		res.Points = append(res.Points, p)
		return nil
	}
	t, err := train.New(model, c.optimizer(k), trainL, testL, train.Config{Epochs: c.Epochs, EvalEvery: d.evalEvery,
		Dir: dir, Quiet: c.Quiet, Progress: c.Progress, OnEval: onEval})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	_, err = t.Run()
	res.Seconds, res.Steps = time.Since(start).Seconds(), t.Step()
	if err != nil {
		if !errors.Is(err, graph.ErrNonFinite) && !errors.Is(err, optim.ErrNonFiniteParam) {
			return nil, err
		}
		res.Diverged = err.Error()
	}
	return res, res.align(d)
}

// align checks the points against the planned evaluation steps and fills
// those a divergence left out with NaN.
func (r *runResult) align(d *data) error {
	for i, s := range d.evalSteps {
		if i < len(r.Points) {
			if r.Points[i].Step != s {
				return fmt.Errorf("%s: evaluation %d at step %d, planned at %d", r.Key.dir(), i, r.Points[i].Step, s)
			}
			continue
		}
		if r.Diverged == "" {
			return fmt.Errorf("%s: %d evaluations, planned %d", r.Key.dir(), len(r.Points), len(d.evalSteps))
		}
		nan := math.NaN()
		r.Points = append(r.Points, point{s, float64(s) / float64(d.stepsPerEpoch), nan, nan, nan, nan, nan, nan})
	}
	if len(r.Points) != len(d.evalSteps) {
		return fmt.Errorf("%s: %d evaluations, planned %d", r.Key.dir(), len(r.Points), len(d.evalSteps))
	}
	return nil
}
