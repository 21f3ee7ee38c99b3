package ops

// Elementwise sum a + b of two tensors of the same shape, into a buffer the
// op owns: the residual connection of a Transformer block without the
// per-step allocation of gorgonia's Add. Its gradient is G for both inputs.

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for tensors of equal shape and dtype.
func Add(a, b *G.Node) (*G.Node, error) {
	if err := checkFloatTensor("ops.Add", "a", a); err != nil {
		return nil, err
	}
	if err := checkFloatTensor("ops.Add", "b", b); err != nil {
		return nil, err
	}
	if err := checkSameType("ops.Add", a, b); err != nil {
		return nil, err
	}
	return apply(&addOp{dims: a.Dims()}, a, b)
}

type addOp struct {
	opDefaults
	dims int
	out  buffer
}

func (op *addOp) Arity() int    { return 2 }
func (op *addOp) Type() hm.Type { return fnType(op.dims, op.dims, op.dims) }
func (op *addOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := shapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *addOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("%v: got %d inputs, want 2", op, len(vs))
	}
	a, err := dense(op, "a", vs[0])
	if err != nil {
		return nil, err
	}
	b, err := dense(op, "b", vs[1])
	if err != nil {
		return nil, err
	}
	if err := sameLayout(op, a, "b", b); err != nil {
		return nil, err
	}
	out := op.out.get(a.Dtype(), a.Shape())
	switch o := out.Data().(type) {
	case []float32:
		addKernel(o, a.Float32s(), b.Float32s())
	case []float64:
		addKernel(o, a.Float64s(), b.Float64s())
	}
	return out, nil
}

func addKernel[T Float](out, a, b []T) {
	parallelRows(len(out), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = a[i] + b[i]
		}
	})
}

func (op *addOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ops.add") }
func (op *addOp) Hashcode() uint32      { return hashOf(op) }
func (op *addOp) String() string        { return "add" }
func (op *addOp) DiffWRT(n int) []bool  { return allTrue(n) }
func (op *addOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
func (op *addOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := outGrad(op, output)
	if err != nil {
		return err
	}
	if err := accumulateGrad(op, inputs[0], gv); err != nil {
		return err
	}
	return accumulateGrad(op, inputs[1], gv)
}
