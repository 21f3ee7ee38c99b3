package fused

// Matrix product with optional transposes and a row-broadcast bias:
//
//	forward   C = op(A)·op(B) + 1·biasᵀ     (Linear: x·Wᵀ + b)
//	backward  dA = G·op(B)ᵀ, dB = op(A)ᵀ·G  (again products of this kind)
//	          dbias = Σ_rows G              (SumRows; its adjoint is BroadcastRows)
//
// Every derivative is another op of this file, so Linear is differentiable
// to any order. The bias is added by pre-filling C and calling GEMM with
// β = 1, so it is never materialized as a broadcast matrix.
//
// The bias is not fused further into the own GEMM's tiles, nor an
// activation's backward into the product that makes its incoming gradient:
// both were built bit-identical and measured no faster (commits 66dda54
// and 6be0e0e hold the code and the measurement), because these
// intermediates stay in L3 between the passes and GELU's cost is its
// arithmetic, which fusion does not remove.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Linear returns x·wᵀ + bias for x (rows × in), w (out × in) and bias (out)
// or nil: PyTorch's F.linear.
func Linear(x, w, bias *G.Node) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.Linear", "input", x); err != nil {
		return nil, err
	}
	if err := opkit.CheckMatrix("fused.Linear", "weight", w); err != nil {
		return nil, err
	}
	if x.Shape()[1] != w.Shape()[1] {
		return nil, fmt.Errorf("fused.Linear: input %q has %d features, weight %q expects %d (weight shape %v)", x.Name(), x.Shape()[1], w.Name(), w.Shape()[1], w.Shape())
	}
	if x.Dtype() != w.Dtype() {
		return nil, fmt.Errorf("fused.Linear: input %q is %v but weight %q is %v", x.Name(), x.Dtype(), w.Name(), w.Dtype())
	}
	if bias == nil {
		return opkit.Apply(newMatMul(false, true, false, false), x, w)
	}
	if err := opkit.CheckVector("fused.Linear", "bias", bias, w.Shape()[0], w.Dtype()); err != nil {
		return nil, err
	}
	return opkit.Apply(newMatMul(false, true, true, false), x, w, bias)
}

// MatMul returns op(a)·op(b), where op transposes its argument when the flag
// is set.
func MatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.MatMul", "a", a); err != nil {
		return nil, err
	}
	if err := opkit.CheckMatrix("fused.MatMul", "b", b); err != nil {
		return nil, err
	}
	op := newMatMul(transA, transB, false, false)
	if _, err := op.InferShape(a.Shape(), b.Shape()); err != nil {
		return nil, err
	}
	if a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("fused.MatMul: %q is %v but %q is %v", a.Name(), a.Dtype(), b.Name(), b.Dtype())
	}
	return opkit.Apply(op, a, b)
}

// matMulOp is MatMul (with a bias: Linear) or, batched, BatchedMatMul.
type matMulOp struct {
	opkit.Base
	tA, tB  bool
	bias    bool
	batched bool
	out     opkit.Buffer
}

// matMulSig: a and b, then the bias when there is one.
var matMulSig = opkit.Signature{In: []int{2, 2, 1}, Required: 2, Out: 2}

func newMatMul(tA, tB, bias, batched bool) *matMulOp {
	op := &matMulOp{tA: tA, tB: tB, bias: bias, batched: batched}
	op.Base = opkit.Base{Name: matMulName(tA, tB, bias), Key: fmt.Sprintf("ops.matmul(%t,%t,%t)", tA, tB, bias), Dims: matMulSig.Dims(bias), Backward: op.backward}
	if batched {
		op.Name, op.Key, op.Dims = "batched "+op.Name, fmt.Sprintf("ops.bmm(%t,%t)", tA, tB), []int{3, 3, 3}
	}
	return op
}

func matMulName(tA, tB, bias bool) string {
	s := "matmul"
	if tA {
		s += "ᵀ"
	}
	s += "·"
	if tB {
		s += "ᵀ"
	}
	if bias {
		s += "+b"
	}
	return s
}

// dims returns m, n, k of op(A) (m×k) · op(B) (k×n).
func (op *matMulOp) dims(a, b tensor.Shape) (m, n, k int, err error) {
	if len(a) != 2 || len(b) != 2 {
		return 0, 0, 0, fmt.Errorf("%v: shapes %v and %v, want matrices", op, a, b)
	}
	m, k = a[0], a[1]
	if op.tA {
		m, k = k, m
	}
	kb, n := b[0], b[1]
	if op.tB {
		kb, n = n, kb
	}
	if k != kb {
		return 0, 0, 0, fmt.Errorf("%v: inner dimensions differ: %v and %v", op, a, b)
	}
	return m, n, k, nil
}

// shape returns the product's shape (batch, m, n) or (m, n), and k. The
// shape is a slice of dims, so that Do's shape stays on its stack.
func (op *matMulOp) shape(dims *[3]int, a, b tensor.Shape) (c tensor.Shape, k int, err error) {
	if op.batched {
		batch, m, n, k, err := op.batchDims(a, b)
		*dims = [3]int{batch, m, n}
		return dims[:3], k, err
	}
	m, n, k, err := op.dims(a, b)
	*dims = [3]int{m, n}
	return dims[:2], k, err
}

func (op *matMulOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	a, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	b, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	c, _, err := op.shape(new([3]int), a, b)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (op *matMulOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *matMulOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"a", "b", "bias"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	a, b, bias := in[0], in[1], in[2]
	var dims [3]int
	cs, k, err := op.shape(&dims, a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	n := cs[len(cs)-1]
	if op.bias {
		if bias.Shape().TotalSize() != n {
			return nil, fmt.Errorf("%v: bias has %d elements, want %d", op, bias.Shape().TotalSize(), n)
		}
	}
	if a.Dtype() != b.Dtype() || (bias != nil && bias.Dtype() != a.Dtype()) {
		return nil, fmt.Errorf("%v: mixed dtypes", op)
	}
	c, err := op.out.Use(op, prealloc, a.Dtype(), cs)
	if err != nil {
		return nil, err
	}
	batch, m := 1, cs[len(cs)-2]
	if op.batched {
		batch = cs[0]
	}
	lda, ldb := a.Shape()[a.Dims()-1], b.Shape()[b.Dims()-1]
	switch c.Dtype() {
	case tensor.Float32:
		cd := c.Float32s()
		beta := fillRows(cd, bias, n)
		err = bmm(op.tA, op.tB, batch, m, n, k, a.Float32s(), lda, b.Float32s(), ldb, float32(beta), cd)
	case tensor.Float64:
		cd := c.Float64s()
		beta := fillRows(cd, bias, n)
		err = bmm(op.tA, op.tB, batch, m, n, k, a.Float64s(), lda, b.Float64s(), ldb, beta, cd)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return c, nil
}

// fillRows copies bias into every row of c and returns the GEMM β that keeps
// it (1), or returns 0 when there is no bias.
func fillRows[T graph.Float](c []T, bias *tensor.Dense, n int) float64 {
	if bias == nil {
		return 0
	}
	bv := opkit.Elems[T](bias)
	for r := 0; r < len(c); r += n {
		copy(c[r:r+n], bv)
	}
	return 1
}

// gradOps returns the ops and argument order for dA and dB given G:
// dA = G·op(B)ᵀ, dB = op(A)ᵀ·G, written without explicit transposes.
func (op *matMulOp) gradOps() (da *matMulOp, daArgs [2]int, db *matMulOp, dbArgs [2]int) {
	const A, B, Gr = 0, 1, 2
	if !op.tA {
		da, daArgs = newMatMul(false, !op.tB, false, op.batched), [2]int{Gr, B}
	} else {
		da, daArgs = newMatMul(op.tB, true, false, op.batched), [2]int{B, Gr}
	}
	if !op.tB {
		db, dbArgs = newMatMul(!op.tA, false, false, op.batched), [2]int{A, Gr}
	} else {
		db, dbArgs = newMatMul(true, op.tA, false, op.batched), [2]int{Gr, A}
	}
	return
}

func (op *matMulOp) backward(gs *opkit.Grads) {
	args := []opkit.Ref{gs.Input(0), gs.Input(1), gs.Grad()}
	da, ia, db, ib := op.gradOps()
	gs.Set(0, gs.Apply(da, args[ia[0]], args[ia[1]]))
	gs.Set(1, gs.Apply(db, args[ib[0]], args[ib[1]]))
	if op.bias {
		gs.Set(2, gs.Apply(newSumRows(), gs.Grad()))
	}
}

// SumRows returns the column sums of a matrix (rows × n) as a vector (n):
// the gradient of a row-broadcast bias.
func SumRows(x *G.Node) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.SumRows", "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(newSumRows(), x)
}

// BroadcastRows returns a (rows × n) matrix whose rows are all v (n).
func BroadcastRows(v *G.Node, rows int) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.BroadcastRows", "input", v); err != nil {
		return nil, err
	}
	if v.Dims() != 1 || rows <= 0 {
		return nil, fmt.Errorf("fused.BroadcastRows: input %q has shape %v and rows = %d, want a vector and rows > 0", v.Name(), v.Shape(), rows)
	}
	return opkit.Apply(newBroadcastRows(rows), v)
}

// sumRowsOp and broadcastRowsOp are each other's adjoints.
type sumRowsOp struct {
	opkit.Base
	out opkit.Buffer
	b32 sumRowsBody[float32]
	b64 sumRowsBody[float64]
}

func newSumRows() *sumRowsOp {
	op := &sumRowsOp{}
	op.Base = opkit.Base{Name: "sumrows", Key: "ops.sumrows", Dims: []int{2, 1}, Backward: func(gs *opkit.Grads) {
		gs.Set(0, gs.Apply(newBroadcastRows(gs.Node(0).Shape()[0]), gs.Grad()))
	}}
	return op
}

func (op *sumRowsOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, s)
	}
	return tensor.Shape{s[1]}, nil
}

func (op *sumRowsOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *sumRowsOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Dims() != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, x.Shape())
	}
	n := x.Shape()[1]
	out, err := op.out.Use(op, prealloc, x.Dtype(), tensor.Shape{n})
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		op.b32.run(out.Float32s(), x.Float32s(), n)
	case tensor.Float64:
		op.b64.run(out.Float64s(), x.Float64s(), n)
	}
	return out, nil
}

// sumRowsBody sums the rows of x into out over a range of columns, so that
// the columns can be split among cores. Each column is summed from the
// first row to the last whatever the split, so the result does not depend
// on the number of cores. The op keeps one per dtype: nothing is allocated
// per call.
type sumRowsBody[T graph.Float] struct {
	out, x []T
	n      int
}

// sumRowsMinCols is the narrowest column range a core takes: 512 bytes of
// each row or more, so each core streams through whole cache lines.
const sumRowsMinCols = 128

func (b *sumRowsBody[T]) run(out, x []T, n int) {
	b.out, b.x, b.n = out, x, n
	rows := len(x) / max(n, 1)
	parallel.For(n, max(sumRowsMinCols, parallel.RowGrain(rows)), b)
	b.out, b.x = nil, nil
}

// Run sums columns [lo, hi).
func (b *sumRowsBody[T]) Run(lo, hi int) { sumRows(b.out[lo:hi], b.x, b.n, lo) }

// sumRows sets out[j] to the sum of x[r·n + lo + j] over the rows r, adding
// the rows in order. Four rows are added per pass over out: the sum is held
// in a register between them, and the additions are the same, in the same
// order, as one row at a time.
func sumRows[T graph.Float](out, x []T, n, lo int) {
	clear(out)
	w := len(out)
	r := 0
	for ; r+4*n <= len(x); r += 4 * n {
		r0 := x[r+lo : r+lo+w]
		r1 := x[r+n+lo : r+n+lo+w]
		r2 := x[r+2*n+lo : r+2*n+lo+w]
		r3 := x[r+3*n+lo : r+3*n+lo+w]
		for j := range out {
			s := out[j]
			s += r0[j]
			s += r1[j]
			s += r2[j]
			s += r3[j]
			out[j] = s
		}
	}
	for ; r < len(x); r += n {
		row := x[r+lo : r+lo+w]
		for j, v := range row {
			out[j] += v
		}
	}
}

type broadcastRowsOp struct {
	opkit.Base
	rows int
	out  opkit.Buffer
}

func newBroadcastRows(rows int) *broadcastRowsOp {
	op := &broadcastRowsOp{rows: rows}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("broadcastrows(%d)", rows), Key: fmt.Sprintf("ops.broadcastrows(%d)", rows), Dims: []int{1, 2},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(newSumRows(), gs.Grad())) },
	}
	return op
}

func (op *broadcastRowsOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	if len(s) != 1 {
		return nil, fmt.Errorf("%v: input shape %v, want a vector", op, s)
	}
	return tensor.Shape{op.rows, s[0]}, nil
}

func (op *broadcastRowsOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *broadcastRowsOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	v := in[0]
	n := v.Shape().TotalSize()
	out, err := op.out.Use(op, prealloc, v.Dtype(), tensor.Shape{op.rows, n})
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		fillRows(o, v, n)
	case tensor.Float64:
		o := out.Float64s()
		fillRows(o, v, n)
	}
	return out, nil
}

var (
	_ G.ADOp = &matMulOp{}
	_ G.SDOp = &matMulOp{}
	_ G.ADOp = &sumRowsOp{}
	_ G.SDOp = &broadcastRowsOp{}
)
