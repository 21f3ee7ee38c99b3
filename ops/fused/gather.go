package fused

// Element gather and the sequence bookkeeping built on it (reshapes, image
// patches, a [CLS] row in front of every sequence, picking rows):
//
//	Gather      y[i] = x[idx[i]]          (flat indices, any output shape)
//	            dx = scatter-add of g at idx
//	scatter     the adjoint of Gather; its adjoint is Gather again, so both
//	            are differentiable to any order
//	PrependRow  y = [r; x_1; r; x_2; …] per group; dx and dr are Gathers
//	            and a SumRows of g, so it is differentiable to any order too
//
// The index lists are fixed when the graph is built (they are op
// parameters, hashed with the op), so no run-time index can be out of range.

import (
	"fmt"
	"slices"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gather returns the tensor of the given shape whose flat element i is
// x's flat element idx[i]. len(idx) must be the shape's size and every
// index in [0, x's size). Indices may repeat (their gradients add up).
func Gather(x *G.Node, idx []int, shape ...int) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Gather", "input", x); err != nil {
		return nil, err
	}
	n := 1
	for _, s := range shape {
		if s <= 0 {
			return nil, fmt.Errorf("fused.Gather: output shape %v, want positive sizes", shape)
		}
		n *= s
	}
	if len(shape) == 0 || len(idx) != n {
		return nil, fmt.Errorf("fused.Gather: %d indices for output shape %v, want %d", len(idx), shape, n)
	}
	size := x.Shape().TotalSize()
	for i, j := range idx {
		if j < 0 || j >= size {
			return nil, fmt.Errorf("fused.Gather: index %d is %d, want one in [0, %d) (input %q of shape %v)", i, j, size, x.Name(), x.Shape())
		}
	}
	return opkit.Apply(newGather(slices.Clone(idx), x.Shape().Clone(), tensor.Shape(slices.Clone(shape)), false), x)
}

// Reshape returns x with the given shape (same size), as a copy the op owns.
func Reshape(x *G.Node, shape ...int) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Reshape", "input", x); err != nil {
		return nil, err
	}
	n := x.Shape().TotalSize()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	y, err := Gather(x, idx, shape...)
	if err != nil {
		return nil, fmt.Errorf("fused.Reshape: %v to %v: %w", x.Shape(), shape, err)
	}
	return y, nil
}

// gatherOp is Gather (scatter false) or its adjoint (scatter true), which
// adds element i of its input into element idx[i] of a zero tensor of shape
// in.
type gatherOp struct {
	opkit.Base
	idx       []int
	in, shape tensor.Shape // the gather's input and output shapes
	scatter   bool
	out       opkit.Buffer
}

func newGather(idx []int, in, shape tensor.Shape, scatter bool) *gatherOp {
	op := &gatherOp{idx: idx, in: in, shape: shape, scatter: scatter}
	from, to := op.shapes()
	key := []byte(fmt.Sprintf("ops.gather(%t,%v,%v,%d:", scatter, in, shape, len(idx)))
	for _, j := range idx {
		for k := 0; k < 8; k++ {
			key = append(key, byte(j>>(8*k)))
		}
	}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("gather%v", shape), Key: string(key), Dims: []int{len(from), len(to)},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(op.adjoint(), gs.Grad())) },
	}
	if scatter {
		op.Name = fmt.Sprintf("scatter%v", in)
	}
	return op
}

func (op *gatherOp) adjoint() *gatherOp {
	return newGather(op.idx, op.in, op.shape, !op.scatter)
}

// shapes returns the op's input and output shapes.
func (op *gatherOp) shapes() (from, to tensor.Shape) {
	if op.scatter {
		return op.shape, op.in
	}
	return op.in, op.shape
}

func (op *gatherOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	from, to := op.shapes()
	if !graph.SameShape(s, from) {
		return nil, fmt.Errorf("%v: input shape %v, want %v", op, s, from)
	}
	return to.Clone(), nil
}

func (op *gatherOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *gatherOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	from, to := op.shapes()
	if x.Shape().TotalSize() != from.TotalSize() {
		return nil, fmt.Errorf("%v: input shape %v, want %v", op, x.Shape(), from)
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), to)
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		gatherInto(o, x.Float32s(), op.idx, op.scatter)
	case tensor.Float64:
		o := out.Float64s()
		gatherInto(o, x.Float64s(), op.idx, op.scatter)
	}
	return out, nil
}

func gatherInto[T graph.Float](out, x []T, idx []int, scatter bool) {
	if scatter {
		clear(out)
		for i, j := range idx {
			out[j] += x[i]
		}
		return
	}
	for i, j := range idx {
		out[i] = x[j]
	}
}

// PrependRow returns x (groups·n × d) with the vector row (d) inserted
// before each group of n rows: (groups·(n+1) × d). It is how a [CLS]
// token joins every image's sequence of patch embeddings.
func PrependRow(x, row *G.Node, groups int) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.PrependRow", "input", x); err != nil {
		return nil, err
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	if groups <= 0 || rows%groups != 0 {
		return nil, fmt.Errorf("fused.PrependRow: input %q has %d rows, want a multiple of groups = %d", x.Name(), rows, groups)
	}
	if err := opkit.CheckVector("fused.PrependRow", "row", row, d, x.Dtype()); err != nil {
		return nil, err
	}
	return opkit.Apply(newPrependRow(groups, rows/groups, d), x, row)
}

type prependRowOp struct {
	opkit.Base
	groups, n, d int
	out          opkit.Buffer
}

func newPrependRow(groups, n, d int) *prependRowOp {
	op := &prependRowOp{groups: groups, n: n, d: d}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("prependrow(%d groups)", groups), Key: fmt.Sprintf("ops.prependrow(%d,%d,%d)", groups, n, d),
		Dims: []int{2, 1, 2}, Backward: op.backward,
	}
	return op
}

func (op *prependRowOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.groups * (op.n + 1), op.d}, nil
}

func (op *prependRowOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *prependRowOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input", "row")
	if err != nil {
		return nil, err
	}
	x, r := in[0], in[1]
	if x.Shape().TotalSize() != op.groups*op.n*op.d || r.Shape().TotalSize() != op.d {
		return nil, fmt.Errorf("%v: input %v and row %v, want (%d, %d) and (%d)", op, x.Shape(), r.Shape(), op.groups*op.n, op.d, op.d)
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), tensor.Shape{op.groups * (op.n + 1), op.d})
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		prependRows(o, x.Float32s(), r.Float32s(), op.n*op.d)
	case tensor.Float64:
		o := out.Float64s()
		prependRows(o, x.Float64s(), r.Float64s(), op.n*op.d)
	}
	return out, nil
}

func prependRows[T graph.Float](out, x, r []T, group int) {
	d := len(r)
	for g := 0; g*group < len(x); g++ {
		dst := out[g*(group+d):]
		copy(dst, r)
		copy(dst[d:], x[g*group:(g+1)*group])
	}
}

// gradIndices returns the flat indices, in the output, of the x rows and of
// the inserted rows.
func (op *prependRowOp) gradIndices() (xs, rs []int) {
	for g := 0; g < op.groups; g++ {
		base := g * (op.n + 1) * op.d
		for j := 0; j < op.d; j++ {
			rs = append(rs, base+j)
		}
		for j := op.d; j < (op.n+1)*op.d; j++ {
			xs = append(xs, base+j)
		}
	}
	return xs, rs
}

func (op *prependRowOp) gradOps() (dx, drows *gatherOp) {
	xs, rs := op.gradIndices()
	out := tensor.Shape{op.groups * (op.n + 1), op.d}
	return newGather(xs, out, tensor.Shape{op.groups * op.n, op.d}, false),
		newGather(rs, out, tensor.Shape{op.groups, op.d}, false)
}

// backward: dx gathers the x rows of g, dr sums its inserted rows.
func (op *prependRowOp) backward(gs *opkit.Grads) {
	gx, gr := op.gradOps()
	gs.Set(0, gs.Apply(gx, gs.Grad()))
	gs.Set(1, gs.Apply(newSumRows(), gs.Apply(gr, gs.Grad())))
}

var (
	_ G.ADOp = &gatherOp{}
	_ G.SDOp = &prependRowOp{}
)
