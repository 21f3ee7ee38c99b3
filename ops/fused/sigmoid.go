package fused

// The logistic sigmoid σ(x) = 1/(1 + e^−x), the gate of Dauphin et al.'s GLU:
//
//	forward   y = σ(x)   (as e^x/(1+e^x) for x < 0, so nothing overflows)
//	backward  dx = g ⊙ y ⊙ (1 − y)   (from the saved output)
//
// Double backward is not implemented (the backward op reports an error).

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sigmoid returns σ(x) elementwise (torch.sigmoid).
func Sigmoid(x *G.Node) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Sigmoid", "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(&sigmoidOp{dims: x.Dims()}, x)
}

type sigmoidOp struct {
	opkit.Defaults
	dims int
	grad bool // the backward op: (y, g) ↦ g·y·(1−y)
	out  opkit.Buffer
}

func (op *sigmoidOp) Arity() int {
	if op.grad {
		return 2
	}
	return 1
}
func (op *sigmoidOp) Type() hm.Type {
	if op.grad {
		return opkit.FnType(op.dims, op.dims, op.dims)
	}
	return opkit.FnType(op.dims, op.dims)
}
func (op *sigmoidOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *sigmoidOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"input", "gradient"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if op.grad {
		if err := opkit.SameLayout(op, x, "gradient", in[1]); err != nil {
			return nil, err
		}
	}
	out := op.out.Get(x.Dtype(), x.Shape())
	switch o := out.Data().(type) {
	case []float32:
		sigmoidInto(o, x.Float32s(), affineData[float32](in[1]))
	case []float64:
		sigmoidInto(o, x.Float64s(), affineData[float64](in[1]))
	}
	return out, nil
}

// sigmoidInto writes σ(x), or with g given (x then being σ's output)
// g·x·(1−x).
func sigmoidInto[T graph.Float](out, x, g []T) {
	parallel.Elements(len(out), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := float64(x[i])
			if g != nil {
				out[i] = T(float64(g[i]) * v * (1 - v))
				continue
			}
			if v >= 0 {
				out[i] = T(1 / (1 + math.Exp(-v)))
			} else {
				e := math.Exp(v)
				out[i] = T(e / (1 + e))
			}
		}
	})
}

func (op *sigmoidOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.sigmoid(%d,%t)", op.dims, op.grad) }
func (op *sigmoidOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *sigmoidOp) String() string {
	if op.grad {
		return "sigmoid.dx"
	}
	return "sigmoid"
}
func (op *sigmoidOp) DiffWRT(n int) []bool { return opkit.AllTrue(n) }

func (op *sigmoidOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: double backward through Sigmoid is not implemented", op)
	}
	d, err := opkit.Apply(&sigmoidOp{dims: op.dims, grad: true}, output, grad)
	return G.Nodes{d}, err
}

func (op *sigmoidOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	if op.grad {
		return fmt.Errorf("%v: double backward through Sigmoid is not implemented", op)
	}
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	d, err := (&sigmoidOp{dims: op.dims, grad: true}).Do(output.Value(), gv)
	if err != nil {
		return err
	}
	return opkit.AccumulateGrad(op, inputs[0], d)
}

var (
	_ G.ADOp = &sigmoidOp{}
	_ G.SDOp = &sigmoidOp{}
)
