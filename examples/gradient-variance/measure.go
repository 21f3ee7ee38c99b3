package main

// Part 2: gradients and momentum buffers of an MNIST MLP, per activation:
// at frozen initial weights, during training, in late windows at small
// learning rates, and at the frozen trained weights.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
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

// newNet builds the MLP with its training machine.
func newNet(c config, a activation.Activation) (*probe.Net, error) {
	g, err := graph.New(tensor.Float32, c.Seed)
	if err != nil {
		return nil, err
	}
	n := &probe.Net{}
	n.Input, _ = g.Input("x", c.Batch, 784)
	n.Target, _ = g.Input("y", c.Batch)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: a})
	if err != nil {
		return nil, err
	}
	if n.Output, err = mlp.Forward(n.Input); err != nil {
		return nil, err
	}
	loss, err := nn.CrossEntropyLoss(n.Output, n.Target)
	if err != nil {
		return nil, err
	}
	n.Pre, n.Params = slices.Clone(mlp.Pre), g.ParamTensors()
	n.M, err = g.Compile(loss, graph.Keep(append(slices.Clone(n.Pre), n.Output)...))
	return n, err
}

// measureAct runs the four phases for activation a.
func measureAct(c config, train, test *datasets.Dataset, a activation.Activation) (*actResult, error) {
	start := time.Now()
	note := func(what string) {
		if !c.Quiet {
			fmt.Fprintf(os.Stderr, "%-10s %-20s done at %4.0fs\n", a, what, time.Since(start).Seconds())
		}
	}
	net, err := newNet(c, a)
	if err != nil {
		return nil, err
	}
	units, err := probe.NewUnits(a, c.Hidden...)
	if err != nil {
		return nil, err
	}
	res := &actResult{Act: a}
	// watch runs burn + steps steps with the buffers (none: gradients only)
	// watched, and the network's f'(z) on the first unit-batches steps.
	watch := func(name string, next probe.Stream, steps, burn int, bufs []probe.Buffer, opt optim.Optimizer) error {
		w, err := probe.NewWatch(net.Params, c.Window/c.Blocks, burn, bufs...)
		if err == nil {
			err = w.WatchUnits(units, net.M, net.Pre, c.UnitBatches)
		}
		if err == nil {
			_, err = net.Run(next, burn+steps, w, opt)
		}
		p := phase{Name: name}
		if err == nil {
			p.Summary, err = w.Summary()
		}
		res.Phases = append(res.Phases, p)
		note(name)
		return err
	}
	// Frozen phases draw batches with replacement from streams shared by
	// all activations, so that their gradients are paired batch by batch.
	initS, err1 := probe.NewSampler(train, c.Batch, tensor.Float32, c.Seed, "init")
	frozenS, err2 := probe.NewSampler(train, c.Batch, tensor.Float32, c.Seed, "frozen")
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := watch("init", initS.Stream(), c.InitSamples, 0, nil, nil); err != nil {
		return nil, err
	}
	l, err := datasets.NewLoader(train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return nil, err
	}
	next, opt := probe.LoaderStream(l), &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}
	// Training: Σ_j Var(g_j) and the mean loss in blocks of c.VarBlock steps.
	for step := c.VarBlock; step <= c.TrainSteps; step += c.VarBlock {
		w, _ := probe.NewWatch(net.Params, 0, 0)
		loss, err := net.Run(next, c.VarBlock, w, opt)
		if err != nil {
			return nil, fmt.Errorf("training: %w", err)
		}
		s, err := w.Summary()
		if err != nil {
			return nil, err
		}
		res.TrainStep, res.TrainVar, res.TrainLoss = append(res.TrainStep, step), append(res.TrainVar, s.All().Var), append(res.TrainLoss, loss)
	}
	if _, err := net.Run(next, c.TrainSteps%c.VarBlock, nil, opt); err != nil {
		return nil, fmt.Errorf("training: %w", err)
	}
	note("train")
	for _, lr := range c.WindowLRs {
		opt.SetLR(lr)
		if err := watch(windowName(lr), next, c.Window, burnIn(c), buffers, opt); err != nil {
			return nil, err
		}
	}
	tl, err := datasets.NewLoader(test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err == nil {
		res.Accuracy, err = net.Accuracy(tl)
	}
	if err != nil {
		return nil, err
	}
	note(fmt.Sprintf("test accuracy %.4f", res.Accuracy))
	return res, watch("frozen", frozenS.Stream(), c.Window, burnIn(c), buffers, nil)
}

// windowName names the phase of a training window at learning rate lr.
func windowName(lr float64) string { return fmt.Sprintf("window_lr%g", lr) }

// measureAll measures every activation, c.Workers at a time (a grid of
// one seed, which also fixes the BLAS threads); each has its own graph and
// streams, so the results do not depend on scheduling.
func measureAll(c config) ([]*actResult, error) {
	train, test, err := datasets.MNIST(c.MNIST)
	if err == nil {
		subsets := experiment.Flags{Seed: c.Seed, TrainN: c.TrainN, TestN: c.TestN}
		train, test, err = subsets.Subsets(train, test)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*actResult, len(c.Acts))
	grid := experiment.Grid[int]{Settings: make([]int, len(c.Acts)), Seeds: []uint64{c.Seed}, Workers: c.Workers,
		Name: func(i int) string { return c.Acts[i].Name() }}
	for i := range grid.Settings {
		grid.Settings[i] = i
	}
	_, err = grid.Run(func(r *experiment.Run[int]) (err error) {
		out[r.Setting], err = measureAct(c, train, test, c.Acts[r.Setting])
		return err
	})
	return out, err
}
