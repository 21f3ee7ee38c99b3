package main

// Part (b): an MLP on MNIST trained with SGD-momentum for every
// (activation, learning rate, bias initialization), counting dead units on
// a fixed validation subset every few steps.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// setting is one training run of the sweep.
type setting struct {
	Act  ops.Activation
	LR   float64
	Bias string // "default" (PyTorch's U(±1/√in)) or a constant
}

func (s setting) String() string { return fmt.Sprintf("%s lr=%g bias=%s", s.Act, s.LR, s.Bias) }

// runResult is what one run measured. Slices are indexed by probe.
type runResult struct {
	setting
	Steps     []int
	Loss      []float64 // mean training loss since the previous probe (NaN at step 0)
	Dead      []float64 // dead fraction of all hidden units at config.Tol
	DeadExact []float64 // dead fraction at tolerance 0 (f' exactly 0 on every probe example)
	Slope     []float64 // median over hidden units of max |f'(z)| on the probe set
	Layers    [][]int   // dead units per hidden layer at config.Tol
	Accuracy  float64   // test accuracy after training; NaN if the run diverged
	Diverged  int       // the step at which the loss, a gradient or a weight became NaN/Inf; 0 if none
	// DeadMaxZ is the median, over the units dead at config.Tol at the end,
	// of their largest pre-activation on the probe set (NaN if none).
	DeadMaxZ float64
	// MeanSqD is the mean of f'(z)² over all hidden units and probe
	// examples at the end: the network's own E[f'²].
	MeanSqD float64
	// EverDead counts the units dead at config.Tol at some probe; Revived
	// those of them alive at the last probe.
	EverDead, Revived int
	// MedianMaxD is the median over hidden units of max |f'(z)| on the
	// probe set at the end: how much gradient a typical unit can pass.
	MedianMaxD float64
}

// data is MNIST, split once and shared read-only by all runs.
type data struct {
	train, probe, test *datasets.Dataset
}

// mnist memoizes datasets.MNIST per directory: decoding takes a second,
// and the tests call run several times. The datasets are only read.
var mnist = struct {
	sync.Mutex
	train, test map[string]*datasets.Dataset
}{train: map[string]*datasets.Dataset{}, test: map[string]*datasets.Dataset{}}

func loadMNIST(dir string) (train, test *datasets.Dataset, err error) {
	mnist.Lock()
	defer mnist.Unlock()
	if mnist.train[dir] == nil {
		if mnist.train[dir], mnist.test[dir], err = datasets.MNIST(dir); err != nil {
			return nil, nil, err
		}
	}
	return mnist.train[dir], mnist.test[dir], nil
}

func loadData(c config) (*data, error) {
	full, test, err := loadMNIST(c.MNIST)
	if err != nil {
		return nil, err
	}
	if c.TrainN > 0 && c.TrainN < full.Len() {
		if full, err = full.Subset(seq(c.TrainN)); err != nil {
			return nil, err
		}
	}
	tr, val, err := full.Split(1.0/12, c.Seed) // 55 000 / 5 000 of all 60 000
	if err != nil {
		return nil, err
	}
	if c.ProbeN > val.Len() {
		return nil, fmt.Errorf("-probe-n %d: the validation split has only %d examples", c.ProbeN, val.Len())
	}
	p, err := val.Subset(seq(c.ProbeN))
	if err != nil {
		return nil, err
	}
	if c.TestN > 0 && c.TestN < test.Len() {
		if test, err = test.Subset(seq(c.TestN)); err != nil {
			return nil, err
		}
	}
	return &data{train: tr, probe: p, test: test}, nil
}

// trainOne trains one setting and probes it every c.ProbeEvery steps.
func trainOne(c config, d *data, s setting) (*runResult, error) {
	g, err := graph.New(tensor.Float32, c.Seed)
	if err != nil {
		return nil, err
	}
	x, _ := g.Input("x", c.Batch, 784)
	y, _ := g.Input("y", c.Batch)
	cfg := nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: s.Act}
	if s.Bias != "default" {
		v, err := strconv.ParseFloat(s.Bias, 64)
		if err != nil {
			return nil, fmt.Errorf("bias init %q: want \"default\" or a number", s.Bias)
		}
		cfg.BiasInit = graph.Constant(v)
	}
	mlp, err := nn.NewMLP(g, "mlp", cfg)
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
	// A second forward pass of the same weights on the probe set; its
	// pre-activations are kept. (Forward reuses mlp.Pre's array: copy it.)
	xp, _ := g.Input("probe_x", c.ProbeN, 784)
	if _, err := mlp.Forward(xp); err != nil {
		return nil, err
	}
	pre := slices.Clone(mlp.Pre)
	pm, err := g.Compile(nil, graph.Keep(pre...))
	if err != nil {
		return nil, err
	}
	trainL, err := datasets.NewLoader(d.train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return nil, err
	}
	testL, err := datasets.NewLoader(d.test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return nil, err
	}
	probeL, err := datasets.NewLoader(d.probe, datasets.LoaderConfig{BatchSize: c.ProbeN})
	if err != nil {
		return nil, err
	}
	units, err := probe.NewUnits(s.Act, c.Hidden...)
	if err != nil {
		return nil, err
	}
	res := &runResult{setting: s, Accuracy: math.NaN(), DeadMaxZ: math.NaN()}
	var lossSum float64
	var lossN int
	everDead := make([][]bool, len(c.Hidden))
	observe := func(step int) error {
		units.Reset()
		if err := units.ObserveLoader(pm, xp, pre, probeL); err != nil {
			return err
		}
		res.Steps = append(res.Steps, step)
		res.Loss = append(res.Loss, lossSum/float64(lossN)) // NaN at step 0
		lossSum, lossN = 0, 0
		res.Dead = append(res.Dead, units.DeadFraction(c.Tol))
		res.DeadExact = append(res.DeadExact, units.DeadFraction(0))
		var ds []float64
		for l := range c.Hidden {
			ds = append(ds, units.MaxAbsDeriv(l)...)
		}
		res.Slope = append(res.Slope, median(ds))
		var layers []int
		for l := range c.Hidden {
			layers = append(layers, units.DeadCount(l, c.Tol))
			dead := units.Dead(l, c.Tol)
			if everDead[l] == nil {
				everDead[l] = dead
			}
			for j, d := range dead {
				everDead[l][j] = everDead[l][j] || d
			}
		}
		res.Layers = append(res.Layers, layers)
		return nil
	}
	if err := observe(0); err != nil {
		return nil, err
	}
	epochs := (c.Steps + trainL.NumBatches() - 1) / trainL.NumBatches()
	tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification},
		&optim.SGD{LearningRate: s.LR, Momentum: c.Momentum}, trainL, testL,
		train.Config{Epochs: epochs, MaxSteps: c.Steps, EvalEvery: c.Steps, Quiet: true,
			OnStep: func(t *train.Trainer, si train.StepInfo) error {
				lossSum += si.Loss
				lossN++
				if si.Step%c.ProbeEvery == 0 || si.Step == c.Steps {
					return observe(si.Step)
				}
				return nil
			},
			OnEval: func(t *train.Trainer, e train.EvalInfo) error {
				res.Accuracy = e.ValAccuracy
				return nil
			}})
	if err != nil {
		return nil, err
	}
	out, err := tr.Run()
	switch {
	case errors.Is(err, graph.ErrNonFinite) || errors.Is(err, optim.ErrNonFiniteParam):
		// The loss, a gradient or a weight of step Step()+1 is NaN or ±Inf.
		res.Diverged, res.Accuracy = tr.Step()+1, math.NaN()
	case err != nil:
		return nil, err
	case out.Steps != c.Steps:
		return nil, fmt.Errorf("%v: trained %d steps, want %d", s, out.Steps, c.Steps)
	}
	// Summarize the dead units of the last probe (the last step, or the
	// last probe before a divergence).
	var zs, ds []float64
	for l := range c.Hidden {
		ds = append(ds, units.MaxAbsDeriv(l)...)
		mz, dead := units.MaxPre(l), units.Dead(l, c.Tol)
		for j := range dead {
			if everDead[l][j] {
				res.EverDead++
				if !dead[j] {
					res.Revived++
				}
			}
			if dead[j] {
				zs = append(zs, mz[j])
			}
		}
	}
	res.DeadMaxZ, res.MedianMaxD = median(zs), median(ds)
	_, res.MeanSqD = units.DerivMoments()
	return res, nil
}

// median returns the median of xs (NaN if empty); it sorts xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// seq returns 0, 1, ..., n−1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
