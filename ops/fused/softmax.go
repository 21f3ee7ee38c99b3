package fused

// Softmax over the last axis, numerically stable (the row maximum is
// subtracted before exponentiating, in float64 for both dtypes):
//
//	forward   y = exp(x − max x) / Σ exp(x − max x)     (per row)
//	backward  dx = y ⊙ (g − Σ_row g ⊙ y)
//
// The backward op reads the forward output y; double backward through it
// is not implemented (the backward op reports an error if differentiated).

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

// Softmax returns softmax(x) over the last axis of x (any number of
// dimensions ≥ 1), like torch.softmax(x, dim=-1).
func Softmax(x *G.Node) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Softmax", "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(&softmaxOp{dims: x.Dims()}, x)
}

type softmaxOp struct {
	opkit.Defaults
	dims int
	out  opkit.Buffer
}

func (op *softmaxOp) Arity() int    { return 1 }
func (op *softmaxOp) Type() hm.Type { return opkit.FnType(op.dims, op.dims) }
func (op *softmaxOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *softmaxOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	n := x.Shape()[x.Dims()-1]
	out := op.out.Get(x.Dtype(), x.Shape())
	switch o := out.Data().(type) {
	case []float32:
		softmaxRows(o, x.Float32s(), n)
	case []float64:
		softmaxRows(o, x.Float64s(), n)
	}
	return out, nil
}

func softmaxRows[T graph.Float](y, x []T, n int) {
	if n == 0 {
		return
	}
	parallel.Rows(len(x)/n, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxRow(y[r*n:(r+1)*n], x[r*n:(r+1)*n])
		}
	})
}

// softmaxRow writes softmax(x) into y; entries of x that are −Inf get
// probability 0, and a row that is all −Inf gets all zeros (PyTorch gives
// NaN there; zeros keep a fully masked row from poisoning the gradients).
func softmaxRow[T graph.Float](y, x []T) {
	// A NaN never becomes the maximum here, but still reaches the sum and
	// makes the row NaN, as math.Max would (which is several times slower).
	m := math.Inf(-1)
	for _, v := range x {
		if f := float64(v); f > m {
			m = f
		}
	}
	if math.IsInf(m, -1) {
		clear(y)
		return
	}
	var s float64
	for j, v := range x {
		e := math.Exp(float64(v) - m)
		y[j] = T(e)
		s += e
	}
	inv := 1 / s
	for j := range y {
		y[j] = T(float64(y[j]) * inv)
	}
}

func (op *softmaxOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.softmax(%d)", op.dims) }
func (op *softmaxOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *softmaxOp) String() string        { return "softmax" }
func (op *softmaxOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }

func (op *softmaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := opkit.Apply(&softmaxGradOp{dims: op.dims}, output, grad)
	return G.Nodes{d}, err
}

func (op *softmaxOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	d, err := (&softmaxGradOp{dims: op.dims}).Do(output.Value(), gv)
	if err != nil {
		return err
	}
	return opkit.AccumulateGrad(op, inputs[0], d)
}

// softmaxGradOp computes dx = y ⊙ (g − Σ g ⊙ y) from the forward output y
// and the upstream gradient g.
type softmaxGradOp struct {
	opkit.Defaults
	dims int
	out  opkit.Buffer
}

func (op *softmaxGradOp) Arity() int    { return 2 }
func (op *softmaxGradOp) Type() hm.Type { return opkit.FnType(op.dims, op.dims, op.dims) }
func (op *softmaxGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *softmaxGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "softmax output", "gradient")
	if err != nil {
		return nil, err
	}
	y, g := in[0], in[1]
	if err := opkit.SameLayout(op, y, "gradient", g); err != nil {
		return nil, err
	}
	n := y.Shape()[y.Dims()-1]
	out := op.out.Get(y.Dtype(), y.Shape())
	switch o := out.Data().(type) {
	case []float32:
		softmaxGradRows(o, y.Float32s(), g.Float32s(), n)
	case []float64:
		softmaxGradRows(o, y.Float64s(), g.Float64s(), n)
	}
	return out, nil
}

func softmaxGradRows[T graph.Float](dx, y, g []T, n int) {
	if n == 0 {
		return
	}
	parallel.Rows(len(y)/n, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxGradRow(dx[r*n:(r+1)*n], y[r*n:(r+1)*n], g[r*n:(r+1)*n])
		}
	})
}

func softmaxGradRow[T graph.Float](dx, y, g []T) {
	var s float64
	for j, v := range y {
		s += float64(v) * float64(g[j])
	}
	for j, v := range y {
		dx[j] = T(float64(v) * (float64(g[j]) - s))
	}
}

func (op *softmaxGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.softmaxgrad(%d)", op.dims) }
func (op *softmaxGradOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *softmaxGradOp) String() string        { return "softmax.dx" }
func (op *softmaxGradOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }
func (op *softmaxGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: double backward through Softmax is not implemented", op)
}
func (op *softmaxGradOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: double backward through Softmax is not implemented", op)
}

var (
	_ G.ADOp = &softmaxOp{}
	_ G.SDOp = &softmaxOp{}
)
