package fused

// Elementwise product a ⊙ b of two tensors of the same shape (the gate of
// GLU-family feed-forward blocks):
//
//	forward   y = a ⊙ b
//	backward  da = g ⊙ b,  db = g ⊙ a   (again products, so double backward works)

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

// Mul returns a ⊙ b for tensors of equal shape and dtype.
func Mul(a, b *G.Node) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Mul", "a", a); err != nil {
		return nil, err
	}
	if err := opkit.CheckFloatTensor("fused.Mul", "b", b); err != nil {
		return nil, err
	}
	if err := opkit.CheckSameType("fused.Mul", a, b); err != nil {
		return nil, err
	}
	return opkit.Apply(&mulOp{dims: a.Dims()}, a, b)
}

type mulOp struct {
	opkit.Defaults
	dims int
	out  opkit.Buffer
}

func (op *mulOp) Arity() int    { return 2 }
func (op *mulOp) Type() hm.Type { return opkit.FnType(op.dims, op.dims, op.dims) }
func (op *mulOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *mulOp) Do(vs ...G.Value) (G.Value, error) {
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
		mulInto(o, a.Float32s(), b.Float32s())
	case []float64:
		mulInto(o, a.Float64s(), b.Float64s())
	}
	return out, nil
}

func mulInto[T graph.Float](out, a, b []T) {
	parallel.Elements(len(out), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = a[i] * b[i]
		}
	})
}

func (op *mulOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.mul(%d)", op.dims) }
func (op *mulOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *mulOp) String() string        { return "mul" }
func (op *mulOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }

func (op *mulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	da, err := opkit.Apply(&mulOp{dims: op.dims}, grad, inputs[1])
	if err != nil {
		return nil, err
	}
	db, err := opkit.Apply(&mulOp{dims: op.dims}, grad, inputs[0])
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, db}, nil
}

func (op *mulOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	for i, other := range []int{1, 0} {
		d, err := (&mulOp{dims: op.dims}).Do(gv, inputs[other].Value())
		if err != nil {
			return err
		}
		if err := opkit.AccumulateGrad(op, inputs[i], d); err != nil {
			return err
		}
	}
	return nil
}

var (
	_ G.ADOp = &mulOp{}
	_ G.SDOp = &mulOp{}
)
