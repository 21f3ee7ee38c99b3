package opkit_test

// The package comment's op, exactly as it shows it, and run: under a
// graph.Machine it writes into the machine's tensor; run by itself it uses
// its own Buffer; its gradient is 2.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type doubleOp struct {
	opkit.Base
	out opkit.Buffer
}

func newDouble(dims int) *doubleOp {
	op := &doubleOp{}
	op.Base = opkit.Base{Name: "double", Key: "double", Dims: []int{dims, dims},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(newDouble(dims), gs.Grad())) }}
	return op
}

func (op *doubleOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

func (op *doubleOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	out, err := op.out.Use(op, prealloc, in[0].Dtype(), in[0].Shape())
	if err != nil {
		return nil, err
	}
	for i, v := range in[0].Float64s() {
		out.Float64s()[i] = 2 * v
	}
	return out, nil
}

func TestDocOp(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	op := newDouble(1)
	y, err := opkit.Apply(op, x)
	if err != nil {
		t.Fatal(err)
	}
	loss, _ := G.Sum(y)
	m, err := g.Compile(loss, graph.WithRespectTo(x), graph.Keep(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Set(x, tensor.New(tensor.WithBacking([]float64{1, -2, 3}))); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(y)
	dx, _ := m.Grad(x)
	for i, want := range []float64{2, -4, 6} {
		if v.(*tensor.Dense).Float64s()[i] != want || dx.Float64s()[i] != 2 {
			t.Fatalf("y = %v, dy/dx = %v, want 2x and 2", v, dx)
		}
	}
	// Run by itself, the op writes into its own Buffer, the same tensor
	// every call; under the Machine it wrote into the machine's tensor.
	own, err := op.Do(tensor.New(tensor.WithBacking([]float64{5, 6, 7})))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := op.Do(tensor.New(tensor.WithBacking([]float64{1, 1, 1})))
	if own != again {
		t.Error("Do by itself did not reuse its own buffer")
	}
	if own == v {
		t.Error("under a Machine the op wrote into its own buffer, not the machine's")
	}
	if _, err := op.UsePreallocDo(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0, 0})), tensor.New(tensor.WithBacking([]float64{5}))); err == nil {
		t.Error("a buffer of the wrong shape: no error")
	}
}
