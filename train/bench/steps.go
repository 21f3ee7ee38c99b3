package bench

// The steps a benchmark times, each a Family.Build: GELU and a copy of the
// same memory traffic on 4M elements, the Transformer feed-forward block's
// training step and its six matrix products alone, the GELU paper's MNIST
// MLP step; the GPT step is in gpt.go.

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GELUElems is the element count of the elementwise steps (GELU, Copy).
const GELUElems = 4 << 20

// GELUWork is the elementwise steps' work per step, in Melem.
func GELUWork(string) (float64, error) { return GELUElems / 1e6, nil }

// GELU is GELU's forward and backward on GELUElems elements; form is
// "exact" or "tanh".
func GELU(form string, dt tensor.Dtype) (func() error, int, error) {
	act, ok := map[string]activation.Activation{"exact": activation.GELU, "tanh": activation.GELUTanh}[form]
	if !ok {
		return nil, 0, fmt.Errorf("GELU form %q, want exact or tanh", form)
	}
	if dt == tensor.Float32 {
		return geluStep[float32](act), 1, nil
	}
	return geluStep[float64](act), 1, nil
}

// geluInputs are the elementwise steps' inputs: x ~ N(0, 9), up ~ N(0, 1).
func geluInputs[T graph.Float]() (x, up []T) {
	r := rng.New(1, "gelu")
	x, up = make([]T, GELUElems), make([]T, GELUElems)
	for i := range x {
		x[i], up[i] = T(3*r.Normal()), T(r.Normal())
	}
	return x, up
}

func geluStep[T graph.Float](act activation.Activation) func() error {
	x, up := geluInputs[T]()
	y, dx := make([]T, GELUElems), make([]T, GELUElems)
	return func() error {
		if err := activation.Forward(act, y, x); err != nil {
			return err
		}
		return activation.Backward(act, dx, x, up)
	}
}

// Copy moves the bytes GELU's forward and backward move, on every core as
// the GELU kernels do: the forward's pass reads x and writes y, the
// backward's reads x and up and writes dx. args must be "gelu-traffic".
func Copy(args string, dt tensor.Dtype) (func() error, int, error) {
	if args != "gelu-traffic" {
		return nil, 0, fmt.Errorf("copy %q, want gelu-traffic", args)
	}
	if dt == tensor.Float32 {
		return copyStep[float32](), 1, nil
	}
	return copyStep[float64](), 1, nil
}

// CopyBytes is what a Copy step of w's dtype moves: 5 element loads or
// stores per element.
func CopyBytes(w Workload) float64 { return float64(GELUElems * 5 * w.Dtype.Size()) }

func copyStep[T graph.Float]() func() error {
	x, up := geluInputs[T]()
	y, dx := make([]T, GELUElems), make([]T, GELUElems)
	return func() error {
		onEveryCore(GELUElems, func(lo, hi int) { copy(y[lo:hi], x[lo:hi]) })
		onEveryCore(GELUElems, func(lo, hi int) {
			d, a, b := dx[lo:hi], x[lo:hi], up[lo:hi]
			for i := range d {
				d[i] = a[i] + b[i]
			}
		})
		return nil
	}
}

// onEveryCore splits [0, n) into GOMAXPROCS contiguous chunks, one goroutine each.
func onEveryCore(n int, body func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for i := range p {
		wg.Go(func() { body(i*n/p, (i+1)*n/p) })
	}
	wg.Wait()
}

// shapedGraph reads the shape <tokens>x<d>x<dff> of an FFN or GEMMs step
// and starts its graph (seed 1).
func shapedGraph(args string, dt tensor.Dtype, p graph.Precision) (g *graph.Graph, tokens, d, dff int, err error) {
	if _, err = fmt.Sscanf(args, "%dx%dx%d", &tokens, &d, &dff); err != nil || tokens < 1 || d < 1 || dff < 1 {
		return nil, 0, 0, 0, fmt.Errorf("shape %q, want <tokens>x<d>x<dff> of positive integers", args)
	}
	if g, err = graph.New(dt, 1); err != nil {
		return nil, 0, 0, 0, err
	}
	return g, tokens, d, dff, g.SetAutocast(p)
}

// setRandom binds seeded N(0, 1) data to the input n.
func setRandom(m *graph.Machine, n *G.Node, seed uint64) error {
	v, err := graph.NewTensor(n.Dtype(), graph.Normal(0, 1), rng.New(seed, "benchmark"), n.Shape()...)
	if err != nil {
		return err
	}
	return m.Set(n, v)
}

// trainStep runs the compiled graph, its gradients and one optimizer step.
func trainStep(m *graph.Machine, opt optim.Optimizer, params []graph.NamedTensor) error {
	if err := m.Run(); err != nil {
		return err
	}
	grads, err := m.Grads()
	if err != nil {
		return err
	}
	return opt.Step(params, grads)
}

// supervised adds the inputs x (xShape) and y (yShape) to g, the model's
// output for x (forward) and its loss against y, and compiles the graph.
func supervised(g *graph.Graph, xShape, yShape []int, forward func(*G.Node) (*G.Node, error),
	lossOf func(out, y *G.Node) (*G.Node, error)) (m *graph.Machine, x, y *G.Node, err error) {
	if x, err = g.Input("x", xShape...); err != nil {
		return nil, nil, nil, err
	}
	if y, err = g.Input("y", yShape...); err != nil {
		return nil, nil, nil, err
	}
	out, err := forward(x)
	if err != nil {
		return nil, nil, nil, err
	}
	loss, err := lossOf(out, y)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err = g.Compile(loss)
	return m, x, y, err
}

// FFN is one SGD-momentum training step of the pre-LN feed-forward block
// (nn.FeedForward) on seeded N(0, 1) data, MSE loss; args is the shape
// <tokens>x<d>x<dff>.
func FFN(args string, dt tensor.Dtype) (func() error, int, error) {
	_, step, err := FFNStep(args, dt)
	return step, 1, err
}

// FFNBF16 is FFN in float32 with the matrix products under
// graph.SetAutocast(BFloat16).
func FFNBF16(args string) (func() error, int, error) {
	_, step, err := ffnStep(args, tensor.Float32, graph.BFloat16)
	return step, 1, err
}

// FFNStep is FFN's step and the machine it runs (for Machine.Profile, say).
func FFNStep(args string, dt tensor.Dtype) (*graph.Machine, func() error, error) {
	return ffnStep(args, dt, graph.Full)
}

func ffnStep(args string, dt tensor.Dtype, p graph.Precision) (*graph.Machine, func() error, error) {
	g, tokens, d, dff, err := shapedGraph(args, dt, p)
	if err != nil {
		return nil, nil, err
	}
	f, err := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: d, Hidden: dff})
	if err != nil {
		return nil, nil, err
	}
	m, x, y, err := supervised(g, []int{tokens, d}, []int{tokens, d}, f.Forward, nn.MSELoss)
	if err != nil {
		return nil, nil, err
	}
	if err := setRandom(m, x, 1); err != nil {
		return nil, nil, err
	}
	if err := setRandom(m, y, 2); err != nil {
		return nil, nil, err
	}
	opt, params := &optim.SGD{LearningRate: 1e-3, Momentum: 0.9}, g.ParamTensors()
	return m, func() error { return trainStep(m, opt, params) }, nil
}

// GEMMs runs the six matrix products of an FFN step of the same shape (two
// forward, four backward) and nothing else.
func GEMMs(args string, dt tensor.Dtype) (func() error, int, error) {
	return gemms(args, dt, graph.Full)
}

// GEMMsBF16 is GEMMs in float32 under graph.SetAutocast(BFloat16).
func GEMMsBF16(args string) (func() error, int, error) {
	return gemms(args, tensor.Float32, graph.BFloat16)
}

func gemms(args string, dt tensor.Dtype, p graph.Precision) (func() error, int, error) {
	g, tokens, d, dff, err := shapedGraph(args, dt, p)
	if err != nil {
		return nil, 0, err
	}
	in := func(name string, shape ...int) *G.Node { n, _ := g.Input(name, shape...); return n }
	x, w1, w2 := in("x", tokens, d), in("w1", dff, d), in("w2", d, dff)
	h, gy, gh := in("h", tokens, dff), in("gy", tokens, d), in("gh", tokens, dff)
	var outs []*G.Node
	for _, p := range []struct {
		a, b   *G.Node
		ta, tb bool
	}{{x, w1, false, true}, {h, w2, false, true}, {gy, w2, false, false}, {gy, h, true, false}, {gh, w1, false, false}, {gh, x, true, false}} {
		n, err := fused.MatMul(p.a, p.b, p.ta, p.tb)
		if err != nil {
			return nil, 0, err
		}
		outs = append(outs, n)
	}
	m, err := g.Compile(nil, graph.Keep(outs...))
	if err != nil {
		return nil, 0, err
	}
	for i, n := range g.Inputs() {
		if err := setRandom(m, n, uint64(i)); err != nil {
			return nil, 0, err
		}
	}
	return m.Run, 1, nil
}

// The GELU paper's MNIST network and batch.
const (
	mlpIn, mlpWidth, mlpDepth, mlpClasses, mlpBatch = 784, 128, 8, 10, 128
)

// MLP is the Adam training step of the GELU paper's MNIST MLP (784 → 8 ×
// 128 → 10, GELU, batch 128), built as examples/gelu-vs-relu builds it,
// either on one fixed batch (args "fixed") or over a shuffled pass of N
// random MNIST-shaped examples ("shuffledN": a run is the pass, DropLast,
// and the data loading is part of the time).
func MLP(args string, dt tensor.Dtype) (func() error, int, error) {
	var n int
	if args != "fixed" {
		if _, err := fmt.Sscanf(args, "shuffled%d", &n); err != nil || n < mlpBatch {
			return nil, 0, fmt.Errorf("mlp %q, want fixed or shuffled<N> with N ≥ %d", args, mlpBatch)
		}
	}
	g, err := graph.New(dt, 1)
	if err != nil {
		return nil, 0, err
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: mlpIn, Hidden: slices.Repeat([]int{mlpWidth}, mlpDepth), Out: mlpClasses,
		Activation: activation.GELU, WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()})
	if err != nil {
		return nil, 0, err
	}
	m, x, y, err := supervised(g, []int{mlpBatch, mlpIn}, []int{mlpBatch}, mlp.Forward, func(out, y *G.Node) (*G.Node, error) { return nn.CrossEntropyLoss(out, y) })
	if err != nil {
		return nil, 0, err
	}
	opt, params := optim.NewAdam(1e-3), g.ParamTensors()
	if n == 0 {
		n = mlpBatch
	}
	l, err := datasets.NewLoader(syntheticMNIST(n), datasets.LoaderConfig{BatchSize: mlpBatch, Shuffle: args != "fixed", Seed: 1, DropLast: true, Dtype: dt})
	if err != nil {
		return nil, 0, err
	}
	epoch := 0
	pass := func() error {
		for i := range l.NumBatches() {
			b, err := l.Batch(epoch, i)
			if err != nil {
				return err
			}
			if err := m.Set(x, b.X); err != nil {
				return err
			}
			if err := m.Set(y, b.Y); err != nil {
				return err
			}
			if err := trainStep(m, opt, params); err != nil {
				return err
			}
		}
		epoch++
		return nil
	}
	if args != "fixed" {
		return pass, l.NumBatches(), nil
	}
	if err := pass(); err != nil { // binds the one batch
		return nil, 0, err
	}
	return func() error { return trainStep(m, opt, params) }, 1, nil
}

// syntheticMNIST is n seeded examples shaped like MNIST: 784 pixels uniform
// in [0, 1), labels uniform in 0..9.
func syntheticMNIST(n int) *datasets.Dataset {
	r := rng.New(1, "synthetic mnist")
	d := &datasets.Dataset{Name: "synthetic MNIST", X: make([]float32, n*mlpIn), Features: mlpIn, Labels: make([]int, n), Classes: mlpClasses}
	for i := range d.X {
		d.X[i] = float32(r.Float64())
	}
	for i := range d.Labels {
		d.Labels[i] = r.IntN(mlpClasses)
	}
	return d
}
