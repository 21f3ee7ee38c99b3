package main

// Part 2: gradients and momentum buffers of an MNIST MLP, per activation:
// at frozen initial weights, during training, in late windows at small
// learning rates, and at the frozen trained weights (probe.Net.Measure).

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// buffers are the momentum buffers every phase watches.
var buffers = []probe.Buffer{{Form: probe.EMA, Beta: 0.9}, {Form: probe.HeavyBall, Beta: 0.9}, {Form: probe.EMA, Beta: 0.99}, {Form: probe.HeavyBall, Beta: 0.99}}

// burnIn is the steps after which every buffer has forgotten its start.
func burnIn(c config) int {
	burn := 0
	for _, b := range buffers {
		burn = max(burn, probe.BurnIn(b.Beta, c.BurnEps))
	}
	return burn
}

// phase is what one measurement phase found.
type phase struct {
	Name string
	probe.Summary
}

// actResult is everything measured for one activation.
type actResult struct {
	Act    activation.Activation
	Phases []phase // init, one per window, frozen
	// Σ_j Var(g_j) within consecutive blocks of config.VarBlock training
	// steps, the block's last step, and the mean training loss over it.
	TrainStep           []int
	TrainVar, TrainLoss []float64
	Accuracy            float64 // test accuracy after the last window
}

// measureAct runs the four phases for activation a.
func measureAct(c config, train, test *datasets.Dataset, a activation.Activation) (*actResult, error) {
	start := time.Now()
	note := func(what string) {
		if !c.Quiet {
			fmt.Fprintf(os.Stderr, "%-10s %-20s done at %4.0fs\n", a, what, time.Since(start).Seconds())
		}
	}
	model, mlp, err := experiment.Classifier(tensor.Float32, c.Seed, c.Batch, nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: a})
	if err != nil {
		return nil, err
	}
	net, err := probe.NewNet(model, mlp.Pre)
	if err != nil {
		return nil, err
	}
	units, err := probe.NewUnits(a, c.Hidden...)
	if err != nil {
		return nil, err
	}
	res := &actResult{Act: a}
	// watch measures burn + steps steps with the buffers (none: gradients
	// only), and the network's f'(z) on the first unit-batches steps.
	watch := func(name string, next probe.Stream, steps, burn int, bufs []probe.Buffer, opt optim.Optimizer) error {
		s, err := net.Measure(next, probe.Phase{Steps: steps, Burn: burn, BlockLen: c.Window / c.Blocks, Buffers: bufs, Opt: opt,
			Units: units, UnitSteps: c.UnitBatches})
		res.Phases = append(res.Phases, phase{name, s})
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
	if res.TrainStep, res.TrainVar, res.TrainLoss, err = net.TrainVariance(next, c.TrainSteps, c.VarBlock, opt); err != nil {
		return nil, fmt.Errorf("training: %w", err)
	}
	note("train")
	for _, lr := range c.WindowLRs {
		opt.SetLR(lr)
		if err := watch(fmt.Sprintf("window_lr%g", lr), next, c.Window, burnIn(c), buffers, opt); err != nil {
			return nil, err
		}
	}
	if res.Accuracy, err = net.Accuracy(tl); err != nil {
		return nil, err
	}
	note(fmt.Sprintf("test accuracy %.4f", res.Accuracy))
	return res, watch("frozen", frozenS.Stream(), c.Window, burnIn(c), buffers, nil)
}

// measureAll measures every activation, c.Workers at a time (a grid of
// one seed, which also fixes the BLAS threads); each has its own graph and
// streams, so the results do not depend on scheduling.
func measureAll(c config) ([]*actResult, error) {
	train, test, err := datasets.MNIST(c.MNIST)
	if err == nil {
		train, test, err = c.Subsets(train, test)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*actResult, len(c.Acts))
	grid := experiment.Grid[activation.Activation]{Settings: c.Acts, Seeds: []uint64{c.Seed}, Workers: c.Workers, Name: activation.Activation.Name}
	_, err = grid.Run(func(r *experiment.Run[activation.Activation]) (err error) {
		out[slices.Index(c.Acts, r.Setting)], err = measureAct(c, train, test, r.Setting)
		return err
	})
	return out, err
}
