package main

// Part (b): an MLP on MNIST trained with SGD-momentum for every
// (activation, learning rate, bias initialization), counting dead units on
// a fixed validation subset every few steps (probe.DeadProbe).

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// setting is one training run of the sweep.
type setting struct {
	Act  activation.Activation
	LR   float64
	Bias string // "default" (PyTorch's U(±1/√in)) or a constant
}

// name names a run in summary keys: "gelu.lr_0.1.bias_-3".
func (s setting) name() string { return fmt.Sprintf("%s.lr_%g.bias_%s", s.Act.Key(), s.LR, s.Bias) }

type runResult = experiment.Run[setting]

// The probes of a run: mean training loss since the previous probe (NaN
// at step 0), dead fraction of all hidden units at config.Tol and at
// tolerance 0 (f' exactly 0 on every probe example), median over hidden
// units of max |f'(z)| on the probe set, then dead units per hidden layer.
var probes = []string{"train_loss", "dead_fraction", "dead_fraction_exact", "median_max_abs_deriv"}

// The end of a run (its last probe: the last step, or the last probe
// before a divergence), in Run.Values: test accuracy (NaN if the run
// diverged), the median over dead units of their largest pre-activation on
// the probe set (NaN if none), the mean of f'(z)² over all hidden units and
// probe examples, the units dead at some probe and those of them alive at
// the end.
const (
	accuracy, deadMaxZ, meanSqDeriv, everDead, revived = "accuracy", "dead_max_z_median", "mean_sq_deriv", "ever_dead", "revived"
)

// sweep trains every setting, c.Workers at a time.
func sweep(c config) ([]*runResult, error) {
	full, test, err := experiment.MNIST(c.MNIST)
	if err == nil {
		full, test, err = c.Subsets(full, test)
	}
	if err != nil {
		return nil, err
	}
	tr, val, err := full.Split(1.0/12, c.Seed) // 55 000 / 5 000 of all 60 000
	if err != nil {
		return nil, err
	}
	if c.ProbeN > val.Len() {
		return nil, fmt.Errorf("-probe-n %d: the validation split has only %d examples", c.ProbeN, val.Len())
	}
	first := make([]int, c.ProbeN)
	for i := range first {
		first[i] = i
	}
	probeSet, err := val.Subset(first)
	if err != nil {
		return nil, err
	}
	grid := experiment.Grid[setting]{Seeds: []uint64{c.Seed}, Name: setting.name, Workers: c.Workers, Metrics: slices.Clone(probes),
		Note: func(r *runResult) string {
			dead := r.Curve.Metric("dead_fraction")
			return fmt.Sprintf("dead %.1f%% → %.1f%%, test accuracy %.2f%%", 100*dead[0], 100*dead[len(dead)-1], 100*r.Values[accuracy])
		}}
	for l := range c.Hidden {
		grid.Metrics = append(grid.Metrics, fmt.Sprintf("dead_layer%d", l+1))
	}
	for _, b := range c.Biases {
		for _, lr := range c.LRs {
			for _, a := range c.Acts {
				grid.Settings = append(grid.Settings, setting{a, lr, b})
			}
		}
	}
	if !c.Quiet {
		grid.Progress = os.Stderr
	}
	return grid.Run(func(r *runResult) error { return trainOne(c, tr, probeSet, test, r) })
}

// trainOne trains one setting and probes it every c.ProbeEvery steps.
func trainOne(c config, trainSet, probeSet, test *datasets.Dataset, r *runResult) error {
	s := r.Setting
	cfg := nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: s.Act}
	if s.Bias != "default" {
		v, err := strconv.ParseFloat(s.Bias, 64)
		if err != nil {
			return fmt.Errorf("bias init %q: want \"default\" or a number", s.Bias)
		}
		cfg.BiasInit = graph.Constant(v)
	}
	model, mlp, err := experiment.Classifier(tensor.Float32, r.Seed, c.Batch, cfg)
	if err != nil {
		return err
	}
	dead, err := probe.NewDeadProbe(model.Graph, mlp, probeSet, c.Tol)
	if err != nil {
		return err
	}
	trainL, err1 := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: r.Seed, DropLast: true})
	testL, err2 := datasets.NewLoader(test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	onStep, err := experiment.ProbeSteps(c.ProbeEvery, c.Steps, func(step int, loss float64) error {
		if err := dead.Observe(); err != nil {
			return err
		}
		u := dead.Units
		values := []float64{loss, u.DeadFraction(c.Tol), u.DeadFraction(0), experiment.Median(dead.MaxAbsDeriv())}
		for l := range c.Hidden {
			values = append(values, float64(u.DeadCount(l, c.Tol)))
		}
		return r.Curve.Add(step, values...)
	})
	if err != nil {
		return err
	}
	r.Values[accuracy] = math.NaN()
	t, err := train.New(model, &optim.SGD{LearningRate: s.LR, Momentum: c.Momentum}, trainL, testL,
		train.Config{MaxSteps: c.Steps, EvalEvery: c.Steps, Quiet: true, OnStep: onStep,
			OnEval: func(t *train.Trainer, e train.EvalInfo) error {
				r.Values[accuracy] = e.ValAccuracy
				return nil
			}})
	if err != nil {
		return err
	}
	if err := r.Train(t); err != nil {
		return err
	}
	if r.Diverged != "" {
		r.Values[accuracy] = math.NaN()
	}
	ever, back := dead.EverDead()
	r.Values[everDead], r.Values[revived], r.Values[deadMaxZ] = float64(ever), float64(back), experiment.Median(dead.DeadMaxPre())
	_, r.Values[meanSqDeriv] = dead.Units.DerivMoments()
	return nil
}
