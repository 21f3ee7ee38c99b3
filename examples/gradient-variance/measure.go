package main

// Part 2: per-parameter gradient moments and momentum-buffer moments in an
// MNIST MLP, for one activation: at frozen initial weights, during
// training, in a late window at a small learning rate, and at the frozen
// trained weights.

import (
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/probe"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// combo is one momentum buffer watched by a phase.
type combo struct {
	Form probe.Form
	Beta float64
}

// phase is what one measurement phase found.
type phase struct {
	Name  string
	Grad  []probe.Totals     // per parameter tensor, then all tensors together
	Comps []probe.Comparison // one per combo (none for "init")
	// Blocks[k][b] is block b's Var(m)/Var(g) divided by the stationary
	// prediction for combo k.
	Blocks         [][]float64
	MeanD, MeanSqD float64 // f'(z) moments over the hidden units on the first batches of the phase
}

// actResult is everything measured for one activation.
type actResult struct {
	Act     ops.Activation
	Tensors []string
	Phases  []phase
	// Gradient variance Σ_j Var(g_j) within consecutive blocks of
	// config.VarBlock training steps, the block's last step, and the mean
	// training loss over the block.
	TrainStep           []int
	TrainVar, TrainLoss []float64
	Accuracy            float64 // test accuracy after the last window
	start               time.Time
}

// model is the MLP with its training machine.
type model struct {
	x, y   *G.Node
	pre    []*G.Node
	logits *G.Node
	m      *graph.Machine
	params []graph.NamedTensor
	units  *probe.Units
}

func newModel(c config, a ops.Activation) (*model, error) {
	g, err := graph.New(tensor.Float32, c.Seed)
	if err != nil {
		return nil, err
	}
	md := &model{}
	md.x, _ = g.Input("x", c.Batch, 784)
	md.y, _ = g.Input("y", c.Batch)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 784, Hidden: c.Hidden, Out: 10, Activation: a})
	if err != nil {
		return nil, err
	}
	if md.logits, err = mlp.Forward(md.x); err != nil {
		return nil, err
	}
	loss, err := nn.CrossEntropyLoss(md.logits, md.y)
	if err != nil {
		return nil, err
	}
	md.pre = slices.Clone(mlp.Pre)
	if md.m, err = g.Compile(loss, graph.Keep(append(slices.Clone(md.pre), md.logits)...)); err != nil {
		return nil, err
	}
	md.params = g.ParamTensors()
	md.units, err = probe.NewUnits(a, c.Hidden...)
	return md, err
}

// grads runs one batch and returns the gradients (the machine's tensors,
// valid until the next run).
func (md *model) grads(x, y *tensor.Dense) ([]*tensor.Dense, error) {
	if err := md.m.Set(md.x, x); err != nil {
		return nil, err
	}
	if err := md.m.Set(md.y, y); err != nil {
		return nil, err
	}
	if err := md.m.Run(); err != nil {
		return nil, err
	}
	if err := md.m.CheckFinite(); err != nil {
		return nil, err
	}
	return md.m.Grads()
}

// observeUnits adds the last run's hidden pre-activations to md.units.
func (md *model) observeUnits() error {
	for l, n := range md.pre {
		v, err := md.m.Value(n)
		if err != nil {
			return err
		}
		if err := md.units.Observe(l, v.(*tensor.Dense), v.(*tensor.Dense).Shape()[0]); err != nil {
			return err
		}
	}
	return nil
}

// recorder is a probe.Watch over the model's gradients that also records
// the network's f'(z) on the first unitRuns recorded steps.
type recorder struct {
	*probe.Watch
	nparams  int
	units    *probe.Units
	observe  func() error
	unitRuns int
}

func newRecorder(params []graph.NamedTensor, blockLen, burn int, combos []combo) (*recorder, error) {
	var bufs []probe.Buffer
	for _, cb := range combos {
		bufs = append(bufs, probe.Buffer{Form: cb.Form, Beta: cb.Beta})
	}
	w, err := probe.NewWatch(params, blockLen, burn, bufs...)
	return &recorder{Watch: w, nparams: len(params)}, err
}

// recordUnits makes the recorder observe md's pre-activations.
func (r *recorder) recordUnits(md *model, batches int) {
	md.units.Reset()
	r.units, r.observe, r.unitRuns = md.units, md.observeUnits, batches
}

func (r *recorder) add(gs []*tensor.Dense) error {
	rec, err := r.Add(gs)
	if err != nil || !rec || r.observe == nil || r.Grads().N() > r.unitRuns {
		return err
	}
	return r.observe()
}

func (r *recorder) summarize(name string) (phase, error) {
	p := phase{Name: name, MeanD: math.NaN(), MeanSqD: math.NaN()}
	for i := 0; i <= r.nparams; i++ {
		k := i
		if i == r.nparams {
			k = -1 // all tensors together, last
		}
		t, err := r.Grads().Total(k)
		if err != nil {
			return p, err
		}
		p.Grad = append(p.Grad, t)
	}
	for k := range r.Buffers() {
		cmp, err := r.Compare(k, -1)
		if err != nil {
			return p, err
		}
		p.Comps = append(p.Comps, cmp)
		var bl []float64
		for _, b := range cmp.Blocks {
			bl = append(bl, b/cmp.Predicted)
		}
		p.Blocks = append(p.Blocks, bl)
	}
	if r.units != nil {
		p.MeanD, p.MeanSqD = r.units.DerivMoments()
	}
	return p, nil
}

// measureAct runs the four phases for activation a.
func measureAct(c config, d *data, a ops.Activation, combos []combo) (*actResult, error) {
	md, err := newModel(c, a)
	if err != nil {
		return nil, err
	}
	res := &actResult{Act: a, start: time.Now()}
	for _, p := range md.params {
		res.Tensors = append(res.Tensors, p.Name)
	}
	burn := 0
	for _, cb := range combos {
		burn = max(burn, probe.BurnIn(cb.Beta, c.BurnEps))
	}
	// Frozen phases draw batches with replacement from streams shared by
	// all activations, so their gradients are paired batch for batch.
	frozen := func(name string, steps, burn int, combos []combo) error {
		s, err := probe.NewSampler(d.train, c.Batch, tensor.Float32, c.Seed, name)
		if err != nil {
			return err
		}
		rec, err := newRecorder(md.params, c.Window/c.Blocks, burn, combos)
		if err != nil {
			return err
		}
		rec.recordUnits(md, c.UnitBatches)
		for i := 0; i < burn+steps; i++ {
			x, y, _ := s.Next()
			gs, err := md.grads(x, y)
			if err != nil {
				return fmt.Errorf("%s step %d: %w", name, i, err)
			}
			if err := rec.add(gs); err != nil {
				return err
			}
		}
		ph, err := rec.summarize(name)
		res.Phases = append(res.Phases, ph)
		res.note(c, name)
		return err
	}
	if err := frozen("init", c.InitSamples, 0, nil); err != nil {
		return nil, err
	}
	if err := trainAndWindow(c, d, md, res, burn, combos); err != nil {
		return nil, err
	}
	if err := frozen("frozen", c.Window, burn, combos); err != nil {
		return nil, err
	}
	return res, nil
}

// trainAndWindow trains for c.TrainSteps at c.LR, then for burn + c.Window
// steps at each of c.WindowLRs in turn with the buffers watched, then
// scores the test set.
func trainAndWindow(c config, d *data, md *model, res *actResult, burn int, combos []combo) error {
	l, err := datasets.NewLoader(d.train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return err
	}
	opt := &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}
	defer func() { res.note(c, "test accuracy") }()
	step := 0
	next := func() ([]*tensor.Dense, float64, error) {
		b, err := l.Batch(step/l.NumBatches(), step%l.NumBatches())
		if err != nil {
			return nil, 0, err
		}
		gs, err := md.grads(b.X, b.Y)
		if err != nil {
			return nil, 0, fmt.Errorf("training step %d: %w", step+1, err)
		}
		loss, _ := md.m.Loss()
		return gs, loss, nil
	}
	block, _ := probe.NewMoments(md.params, 0)
	var lossSum float64
	for ; step < c.TrainSteps; step++ {
		gs, loss, err := next()
		if err != nil {
			return err
		}
		if err := block.Add(gs); err != nil {
			return err
		}
		lossSum += loss
		if err := opt.Step(md.params, gs); err != nil {
			return err
		}
		if block.N() == c.VarBlock {
			t, _ := block.Total(-1)
			res.TrainStep, res.TrainVar = append(res.TrainStep, step+1), append(res.TrainVar, t.Var)
			res.TrainLoss = append(res.TrainLoss, lossSum/float64(c.VarBlock))
			block, _ = probe.NewMoments(md.params, 0)
			lossSum = 0
		}
	}
	res.note(c, "train")
	for _, lr := range c.WindowLRs {
		opt.SetLR(lr)
		rec, err := newRecorder(md.params, c.Window/c.Blocks, burn, combos)
		if err != nil {
			return err
		}
		rec.recordUnits(md, c.UnitBatches)
		for i := 0; i < burn+c.Window; i, step = i+1, step+1 {
			gs, _, err := next()
			if err != nil {
				return err
			}
			if err := rec.add(gs); err != nil {
				return err
			}
			if err := opt.Step(md.params, gs); err != nil {
				return err
			}
		}
		ph, err := rec.summarize(windowName(lr))
		if err != nil {
			return err
		}
		res.Phases = append(res.Phases, ph)
		res.note(c, ph.Name)
	}
	res.Accuracy, err = accuracy(c, d, md)
	return err
}

// note reports progress on stderr (never in the output files).
func (res *actResult) note(c config, what string) {
	if !c.Quiet {
		fmt.Fprintf(os.Stderr, "%-10s %-16s done at %4.0fs\n", res.Act, what, time.Since(res.start).Seconds())
	}
}

// windowName names the phase of a training window at learning rate lr.
func windowName(lr float64) string { return fmt.Sprintf("window_lr%g", lr) }

// accuracy scores the test set with the training machine (its loss and
// gradients are computed too, and ignored).
func accuracy(c config, d *data, md *model) (float64, error) {
	l, err := datasets.NewLoader(d.test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return 0, err
	}
	correct, n := 0, 0
	for i := 0; i < l.NumBatches(); i++ {
		b, err := l.Batch(0, i)
		if err != nil {
			return 0, err
		}
		if _, err := md.grads(b.X, b.Y); err != nil {
			return 0, err
		}
		v, err := md.m.Value(md.logits)
		if err != nil {
			return 0, err
		}
		k, err := nn.Accuracy(v.(*tensor.Dense), b.Labels, b.Size)
		if err != nil {
			return 0, err
		}
		correct, n = correct+k, n+b.Size
	}
	return float64(correct) / float64(n), nil
}
