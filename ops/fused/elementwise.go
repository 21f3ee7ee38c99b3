package fused

// Elementwise binary ops on two tensors of the same shape, into a buffer
// the op owns (no per-step allocation, unlike gorgonia's Add):
//
//	Add   y = a + b   da = g,      db = g
//	Mul   y = a ⊙ b   da = g ⊙ b,  db = g ⊙ a   (again products, so double backward works)
//
// Add is a Transformer block's residual connection, Mul the gate of the
// GLU-family feed-forward blocks.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for tensors of equal shape and dtype.
func Add(a, b *G.Node) (*G.Node, error) { return applyBinary("fused.Add", add, a, b) }

// Mul returns a ⊙ b for tensors of equal shape and dtype.
func Mul(a, b *G.Node) (*G.Node, error) { return applyBinary("fused.Mul", mul, a, b) }

type binaryKind int

const (
	add binaryKind = iota
	mul
)

func applyBinary(name string, kind binaryKind, a, b *G.Node) (*G.Node, error) {
	if err := opkit.CheckSameFloat(name, a, b); err != nil {
		return nil, err
	}
	return opkit.Apply(newBinary(kind, a.Dims()), a, b)
}

type binaryOp struct {
	opkit.Base
	kind binaryKind
	out  opkit.Buffer
	k32  binaryKernel[float32]
	k64  binaryKernel[float64]
}

func newBinary(kind binaryKind, dims int) *binaryOp {
	op := &binaryOp{kind: kind}
	op.Base = opkit.Base{Dims: []int{dims, dims, dims}, Backward: op.backward}
	// The keys are those the separate add and mul ops had.
	if kind == add {
		op.Name, op.Key = "add", "ops.add"
	} else {
		op.Name, op.Key = "mul", fmt.Sprintf("ops.mul(%d)", dims)
	}
	return op
}

func (op *binaryOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *binaryOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.SameInputs(op, vs, "a", "b")
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	out, err := op.out.Use(op, prealloc, a.Dtype(), a.Shape())
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		binaryInto(&op.k32, op.kind, o, a.Float32s(), b.Float32s())
	case tensor.Float64:
		o := out.Float64s()
		binaryInto(&op.k64, op.kind, o, a.Float64s(), b.Float64s())
	}
	return out, nil
}

// binaryInto sets out to a+b or a·b elementwise, on every core, with k
// as the loop body: the op keeps one per dtype, where a closure handed to
// parallel.For would be allocated on every run.
func binaryInto[T graph.Float](k *binaryKernel[T], kind binaryKind, out, a, b []T) {
	*k = binaryKernel[T]{kind: kind, out: out, a: a, b: b}
	parallel.For(len(out), parallel.MinGrain, k)
	*k = binaryKernel[T]{} // keep no tensor alive
}

type binaryKernel[T graph.Float] struct {
	kind      binaryKind
	out, a, b []T
}

func (k *binaryKernel[T]) Run(lo, hi int) {
	out, a, b := k.out, k.a, k.b
	if k.kind == add {
		for i := lo; i < hi; i++ {
			out[i] = a[i] + b[i]
		}
		return
	}
	for i := lo; i < hi; i++ {
		out[i] = a[i] * b[i]
	}
}

func (op *binaryOp) backward(gs *opkit.Grads) {
	g := gs.Grad()
	if op.kind == add {
		gs.Set(0, g)
		gs.Set(1, g)
		return
	}
	dims := op.Dims[0]
	gs.Set(0, gs.Apply(newBinary(mul, dims), g, gs.Input(1)))
	gs.Set(1, gs.Apply(newBinary(mul, dims), g, gs.Input(0)))
}

var (
	_ G.ADOp = &binaryOp{}
	_ G.SDOp = &binaryOp{}
)
