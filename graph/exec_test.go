package graph_test

// The Machine's executor: no allocation per Run at steady state, gradient
// sums it adds itself, and a panicking op reported as an error naming its
// node.

import (
	"fmt"
	"hash"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// residualMLP builds loss = CE(W₂·(GELU(h) + h) + b₂, y) with h = W₁·x + b₁:
// h feeds two ops, so its gradient is a sum Grad makes, and the gradient of
// the input x is asked for too.
func residualMLP(t *testing.T, dt tensor.Dtype) (*graph.Machine, *G.Node, *G.Node) {
	t.Helper()
	const batch, in, hidden, classes = 4, 6, 8, 3
	g, _ := graph.New(dt, 1)
	x, _ := g.Input("x", batch, in)
	y, _ := g.Input("y", batch)
	w1, _ := g.Param("fc1.weight", graph.XavierUniform(1), hidden, in)
	b1, _ := g.Param("fc1.bias", graph.Normal(0, 0.1), hidden)
	w2, _ := g.Param("fc2.weight", graph.XavierUniform(1), classes, hidden)
	b2, _ := g.Param("fc2.bias", graph.Zeros(), classes)
	h, err := fused.Linear(x, w1, b1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := activation.GELU.Apply(h)
	if err != nil {
		t.Fatal(err)
	}
	r, err := fused.Add(a, h)
	if err != nil {
		t.Fatal(err)
	}
	logits, err := fused.Linear(r, w2, b2)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := fused.CrossEntropy(logits, y)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(loss, graph.WithRespectTo(w1, b1, w2, b2, x), graph.Keep(h))
	if err != nil {
		t.Fatal(err)
	}
	xv, _ := graph.NewTensor(dt, graph.Normal(0, 1), rng.New(2, "x"), batch, in)
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	yv, _ := graph.FromFloat64s(dt, []float64{0, 2, 1, 2}, batch)
	if err := m.Set(y, yv); err != nil {
		t.Fatal(err)
	}
	return m, x, h
}

// The shapes are far below the sizes at which gonum's GEMM (the fallback
// without the own kernels) starts goroutines, so this holds on every
// backend.
func TestRunAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			m, _, _ := residualMLP(t, dt)
			if err := m.Run(); err != nil { // the ops and the machine make their buffers
				t.Fatal(err)
			}
			var err error
			allocs := testing.AllocsPerRun(20, func() { err = m.Run() })
			if err != nil {
				t.Fatal(err)
			}
			if allocs != 0 {
				t.Errorf("%v allocations per Run, want 0", allocs)
			}
		})
	}
}

// A training loop sets the same input tensors again every step, refilled
// with the next batch (datasets.Loader does): Set and Run then allocate
// nothing, and the Run sees the new contents.
func TestSetSameTensorAllocatesNothing(t *testing.T) {
	m, x, h := residualMLP(t, tensor.Float64)
	xv, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(3, "x"), 4, 6)
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	var err error
	allocs := testing.AllocsPerRun(20, func() {
		if err = m.Set(x, xv); err == nil {
			err = m.Run()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 && !raceEnabled { // the race detector allocates
		t.Errorf("%v allocations per Set+Run of the same tensor, want 0", allocs)
	}
	// New contents in the same tensor reach the next Run: h = x·W1ᵀ + b1
	// changes with x.
	before := append([]float64(nil), mustValue(t, m, h).Float64s()...)
	xv.Float64s()[0] += 1
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if after := mustValue(t, m, h).Float64s(); after[0] == before[0] {
		t.Errorf("h[0] = %v after changing x[0], unchanged", after[0])
	}
}

// The gradient sums the machine adds itself (h feeds GELU and the residual
// add) agree with central differences, in float64.
func TestGradientSumsMatchFiniteDifferences(t *testing.T) {
	build := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		h, err := fused.Linear(in[0], in[1], nil)
		if err != nil {
			return nil, err
		}
		a, err := activation.GELU.Apply(h)
		if err != nil {
			return nil, err
		}
		r, err := fused.Add(a, h)
		if err != nil {
			return nil, err
		}
		return fused.Add(r, h) // three gradients reach h: two sums
	}
	inputs := []*tensor.Dense{randTensor(1, 3, 4), randTensor(2, 5, 4)}
	res, err := graph.CheckGrad(build, inputs, graph.GradCheck{Seed: 1})
	if err != nil || !res.OK {
		t.Errorf("CheckGrad: %v %v", res, err)
	}
}

// Gradients are those of the last Run: running twice on the same data gives
// the same gradient, not twice it, and a kept intermediate keeps its value.
func TestRunTwiceGivesTheSameGradients(t *testing.T) {
	m, x, h := residualMLP(t, tensor.Float64)
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	first, _ := m.Grad(x)
	want := graph.Float64s(first)
	kept, _ := m.Value(h)
	wantH := graph.Float64s(kept.(*tensor.Dense))
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	second, _ := m.Grad(x)
	sameAsBefore(t, "gradient after the second Run", graph.Float64s(second), want)
	kept, _ = m.Value(h)
	sameAsBefore(t, "kept value after the second Run", graph.Float64s(kept.(*tensor.Dense)), wantH)
}

func sameAsBefore(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i, v := range got {
		if v != want[i] {
			t.Fatalf("%s: element %d is %v, was %v", what, i, v, want[i])
		}
	}
}

// panicOp is brokenOp (graph_test.go) panicking in Do.
type panicOp struct{ brokenOp }

func (panicOp) Do(...G.Value) (G.Value, error) { panic("boom") }
func (panicOp) WriteHash(h hash.Hash)          { fmt.Fprint(h, "panicOp") }
func (panicOp) Hashcode() uint32               { return 1 }
func (panicOp) String() string                 { return "panicOp" }

func TestPanickingOpBecomesAnErrorNamingTheNode(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2)
	y, err := G.ApplyOp(panicOp{}, x)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(y))
	if err != nil {
		t.Fatal(err)
	}
	m.Set(x, tensor.New(tensor.WithBacking([]float64{1, 2})))
	err = m.Run()
	wantErr(t, err, "panicOp")
	wantErr(t, err, y.Name())
	wantErr(t, err, "boom")
}

// Close drops the machine's buffers; a later Run makes them again.
func TestRunAfterClose(t *testing.T) {
	m, x, _ := residualMLP(t, tensor.Float32)
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	g1, _ := m.Grad(x)
	want := graph.Float64s(g1)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	g2, _ := m.Grad(x)
	sameAsBefore(t, "gradient after Close and Run", graph.Float64s(g2), want)
}

// mustValue is m.Value(n) as a dense tensor, failing the test otherwise.
func mustValue(t *testing.T, m *graph.Machine, n *G.Node) *tensor.Dense {
	t.Helper()
	v, err := m.Value(n)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*tensor.Dense)
	if !ok {
		t.Fatalf("%s: value %T, want *tensor.Dense", n.Name(), v)
	}
	return d
}
