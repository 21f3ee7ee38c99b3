package fused

// The logistic sigmoid σ(x) = 1/(1 + e^−x), the gate of Dauphin et al.'s GLU:
//
//	forward   y = σ(x)   (as e^x/(1+e^x) for x < 0, so nothing overflows)
//	backward  dx = g ⊙ y ⊙ (1 − y)   (from the saved output)
//
// Double backward is not implemented (the backward op reports an error).

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
)

// Sigmoid returns σ(x) elementwise (torch.sigmoid).
func Sigmoid(x *G.Node) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Sigmoid", "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(newSigmoid(x.Dims(), false), x)
}

// sigmoidOp is σ, or with grad its backward op (y, g) ↦ g·y·(1−y).
type sigmoidOp struct {
	opkit.Base
	grad bool
	out  opkit.Buffer
}

func newSigmoid(dims int, grad bool) *sigmoidOp {
	op := &sigmoidOp{grad: grad}
	op.Base = opkit.Base{Name: "sigmoid", Key: fmt.Sprintf("ops.sigmoid(%d,%t)", dims, grad), Dims: []int{dims, dims}, Backward: op.backward}
	if grad {
		op.Name, op.Dims = "sigmoid.dx", []int{dims, dims, dims}
		op.Backward = opkit.NotImplemented("double backward through Sigmoid")
	}
	return op
}

func (op *sigmoidOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.SameInputs(op, vs, []string{"input", "gradient"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x := in[0]
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

// backward: dx = g·y·(1−y), from the saved output y.
func (op *sigmoidOp) backward(gs *opkit.Grads) {
	gs.Set(0, gs.Apply(newSigmoid(op.Dims[0], true), gs.Output(), gs.Grad()))
}

var (
	_ G.ADOp = &sigmoidOp{}
	_ G.SDOp = &sigmoidOp{}
)
