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

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/ops/opkit"
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
		return opkit.Apply(&matMulOp{tB: true}, x, w)
	}
	if err := opkit.CheckVector("fused.Linear", "bias", bias, w.Shape()[0], w.Dtype()); err != nil {
		return nil, err
	}
	return opkit.Apply(&matMulOp{tB: true, bias: true}, x, w, bias)
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
	op := &matMulOp{tA: transA, tB: transB}
	if _, err := op.InferShape(a.Shape(), b.Shape()); err != nil {
		return nil, err
	}
	if a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("fused.MatMul: %q is %v but %q is %v", a.Name(), a.Dtype(), b.Name(), b.Dtype())
	}
	return opkit.Apply(op, a, b)
}

type matMulOp struct {
	opkit.Defaults
	tA, tB bool
	bias   bool
	out    opkit.Buffer
}

// matMulSig: a and b, then the bias when there is one.
var matMulSig = opkit.Signature{In: []int{2, 2, 1}, Required: 2, Out: 2}

func (op *matMulOp) Arity() int    { return matMulSig.Arity(op.bias) }
func (op *matMulOp) Type() hm.Type { return matMulSig.Type(op.bias) }

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

func (op *matMulOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	a, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	b, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	m, n, _, err := op.dims(a, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{m, n}, nil
}

func (op *matMulOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"a", "b", "bias"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	a, b, bias := in[0], in[1], in[2]
	m, n, k, err := op.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	if op.bias {
		if bias.Shape().TotalSize() != n {
			return nil, fmt.Errorf("%v: bias has %d elements, want %d", op, bias.Shape().TotalSize(), n)
		}
	}
	if a.Dtype() != b.Dtype() || (bias != nil && bias.Dtype() != a.Dtype()) {
		return nil, fmt.Errorf("%v: mixed dtypes", op)
	}
	c := op.out.Get(a.Dtype(), tensor.Shape{m, n})
	lda, ldb := a.Shape()[1], b.Shape()[1]
	switch cd := c.Data().(type) {
	case []float32:
		beta := fillRows(cd, bias, n)
		gemm.Gemm(op.tA, op.tB, m, n, k, 1, a.Float32s(), lda, b.Float32s(), ldb, float32(beta), cd, n)
	case []float64:
		beta := fillRows(cd, bias, n)
		gemm.Gemm(op.tA, op.tB, m, n, k, 1, a.Float64s(), lda, b.Float64s(), ldb, beta, cd, n)
	}
	return c, nil
}

// fillRows copies bias into every row of c and returns the GEMM β that keeps
// it (1), or returns 0 when there is no bias.
func fillRows[T graph.Float](c []T, bias *tensor.Dense, n int) float64 {
	if bias == nil {
		return 0
	}
	bv := bias.Data().([]T)
	for r := 0; r < len(c); r += n {
		copy(c[r:r+n], bv)
	}
	return 1
}

func (op *matMulOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "ops.matmul(%t,%t,%t)", op.tA, op.tB, op.bias)
}
func (op *matMulOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *matMulOp) String() string {
	s := "matmul"
	if op.tA {
		s += "ᵀ"
	}
	s += "·"
	if op.tB {
		s += "ᵀ"
	}
	if op.bias {
		s += "+b"
	}
	return s
}
func (op *matMulOp) DiffWRT(n int) []bool { return opkit.AllTrue(n) }

// gradOps returns the ops and argument order for dA and dB given G:
// dA = G·op(B)ᵀ, dB = op(A)ᵀ·G, written without explicit transposes.
func (op *matMulOp) gradOps() (da *matMulOp, daArgs [2]int, db *matMulOp, dbArgs [2]int) {
	const A, B, Gr = 0, 1, 2
	if !op.tA {
		da, daArgs = &matMulOp{tA: false, tB: !op.tB}, [2]int{Gr, B}
	} else {
		da, daArgs = &matMulOp{tA: op.tB, tB: true}, [2]int{B, Gr}
	}
	if !op.tB {
		db, dbArgs = &matMulOp{tA: !op.tA, tB: false}, [2]int{A, Gr}
	} else {
		db, dbArgs = &matMulOp{tA: true, tB: op.tA}, [2]int{Gr, A}
	}
	return
}

func (op *matMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs", op, len(inputs))
	}
	args := []*G.Node{inputs[0], inputs[1], grad}
	da, ia, db, ib := op.gradOps()
	dA, err := opkit.Apply(da, args[ia[0]], args[ia[1]])
	if err != nil {
		return nil, err
	}
	dB, err := opkit.Apply(db, args[ib[0]], args[ib[1]])
	if err != nil {
		return nil, err
	}
	out := G.Nodes{dA, dB}
	if op.bias {
		dbias, err := SumRows(grad)
		if err != nil {
			return nil, err
		}
		out = append(out, dbias)
	}
	return out, nil
}

func (op *matMulOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	vals, gv, err := opkit.DiffArgs(op, inputs, output)
	if err != nil {
		return err
	}
	args := []G.Value{vals[0], vals[1], gv}
	da, ia, db, ib := op.gradOps()
	if err := opkit.DiffInto(op, inputs[0], da, args[ia[0]], args[ia[1]]); err != nil {
		return err
	}
	if err := opkit.DiffInto(op, inputs[1], db, args[ib[0]], args[ib[1]]); err != nil || !op.bias {
		return err
	}
	return opkit.DiffInto(op, inputs[2], &sumRowsOp{}, gv)
}

// SumRows returns the column sums of a matrix (rows × n) as a vector (n):
// the gradient of a row-broadcast bias.
func SumRows(x *G.Node) (*G.Node, error) {
	if err := opkit.CheckMatrix("fused.SumRows", "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(&sumRowsOp{}, x)
}

// BroadcastRows returns a (rows × n) matrix whose rows are all v (n).
func BroadcastRows(v *G.Node, rows int) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.BroadcastRows", "input", v); err != nil {
		return nil, err
	}
	if v.Dims() != 1 || rows <= 0 {
		return nil, fmt.Errorf("fused.BroadcastRows: input %q has shape %v and rows = %d, want a vector and rows > 0", v.Name(), v.Shape(), rows)
	}
	return opkit.Apply(&broadcastRowsOp{rows: rows}, v)
}

type sumRowsOp struct {
	opkit.Defaults
	out opkit.Buffer
}

func (op *sumRowsOp) Arity() int    { return 1 }
func (op *sumRowsOp) Type() hm.Type { return opkit.FnType(2, 1) }
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
func (op *sumRowsOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Dims() != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, x.Shape())
	}
	n := x.Shape()[1]
	out := op.out.Get(x.Dtype(), tensor.Shape{n})
	switch o := out.Data().(type) {
	case []float32:
		sumRows(o, x.Float32s(), n)
	case []float64:
		sumRows(o, x.Float64s(), n)
	}
	return out, nil
}

func sumRows[T graph.Float](out, x []T, n int) {
	clear(out)
	for r := 0; r < len(x); r += n {
		row := x[r : r+n]
		for j, v := range row {
			out[j] += v
		}
	}
}

func (op *sumRowsOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ops.sumrows") }
func (op *sumRowsOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *sumRowsOp) String() string        { return "sumrows" }
func (op *sumRowsOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }
func (op *sumRowsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := BroadcastRows(grad, inputs[0].Shape()[0])
	return G.Nodes{d}, err
}
func (op *sumRowsOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	return opkit.DiffInto(op, inputs[0], &broadcastRowsOp{rows: inputs[0].Shape()[0]}, gv)
}

type broadcastRowsOp struct {
	opkit.Defaults
	rows int
	out  opkit.Buffer
}

func (op *broadcastRowsOp) Arity() int    { return 1 }
func (op *broadcastRowsOp) Type() hm.Type { return opkit.FnType(1, 2) }
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
func (op *broadcastRowsOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	v := in[0]
	n := v.Shape().TotalSize()
	out := op.out.Get(v.Dtype(), tensor.Shape{op.rows, n})
	switch o := out.Data().(type) {
	case []float32:
		fillRows(o, v, n)
	case []float64:
		fillRows(o, v, n)
	}
	return out, nil
}
func (op *broadcastRowsOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.broadcastrows(%d)", op.rows) }
func (op *broadcastRowsOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *broadcastRowsOp) String() string        { return fmt.Sprintf("broadcastrows(%d)", op.rows) }
func (op *broadcastRowsOp) DiffWRT(n int) []bool  { return opkit.AllTrue(n) }
func (op *broadcastRowsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := SumRows(grad)
	return G.Nodes{d}, err
}
func (op *broadcastRowsOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	d, err := (&sumRowsOp{}).Do(gv)
	if err != nil {
		return err
	}
	return opkit.AccumulateGrad(op, inputs[0], d)
}

var (
	_ G.ADOp = &matMulOp{}
	_ G.SDOp = &matMulOp{}
	_ G.ADOp = &sumRowsOp{}
	_ G.SDOp = &broadcastRowsOp{}
)
