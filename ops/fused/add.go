package fused

// Elementwise sum a + b of two tensors of the same shape, into a opkit.Buffer the
// op owns: the residual connection of a Transformer block without the
// per-step allocation of gorgonia's Add. Its gradient is G for both inputs.

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for tensors of equal shape and dtype.
func Add(a, b *G.Node) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Add", "a", a); err != nil {
		return nil, err
	}
	if err := opkit.CheckFloatTensor("fused.Add", "b", b); err != nil {
		return nil, err
	}
	if err := opkit.CheckSameType("fused.Add", a, b); err != nil {
		return nil, err
	}
	return opkit.Apply(&addOp{dims: a.Dims()}, a, b)
}

type addOp struct {
	opkit.Defaults
	dims int
	out  opkit.Buffer
}

func (op *addOp) Arity() int                                        { return 2 }
func (op *addOp) Type() hm.Type                                     { return opkit.FnType(op.dims, op.dims, op.dims) }
func (op *addOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) { return opkit.ShapeArg(op, ds, 0) }

func (op *addOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "a", "b")
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if err := opkit.SameLayout(op, a, "b", b); err != nil {
		return nil, err
	}
	out := op.out.Get(a.Dtype(), a.Shape())
	switch o := out.Data().(type) {
	case []float32:
		addKernel(o, a.Float32s(), b.Float32s())
	case []float64:
		addKernel(o, a.Float64s(), b.Float64s())
	}
	return out, nil
}

func addKernel[T graph.Float](out, a, b []T) {
	parallel.Rows(len(out), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = a[i] + b[i]
		}
	})
}

func (op *addOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ops.add") }
func (op *addOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *addOp) String() string        { return "add" }
func (op *addOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }
func (op *addOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
func (op *addOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	if err := opkit.AccumulateGrad(op, inputs[0], gv); err != nil {
		return err
	}
	return opkit.AccumulateGrad(op, inputs[1], gv)
}
