package fused

// Batched matrix product with optional transposes, for the (batch·heads) ×
// T × T products of attention written out of separate ops:
//
//	forward   C[i] = op(A[i])·op(B[i])        for every batch entry i
//	backward  dA[i] = G[i]·op(B[i])ᵀ, dB[i] = op(A[i])ᵀ·G[i]
//
// The derivatives are again batched products (the same flag algebra as
// MatMul), so double backward works.

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

// BatchedMatMul returns op(a[i])·op(b[i]) for a (batch × m × k) and b
// (batch × k × n) (before the transposes), like torch.bmm with
// a.transpose(1, 2) / b.transpose(1, 2) where the flags are set.
func BatchedMatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	for _, x := range []struct {
		role string
		n    *G.Node
	}{{"a", a}, {"b", b}} {
		if err := opkit.CheckFloatTensor("fused.BatchedMatMul", x.role, x.n); err != nil {
			return nil, err
		}
		if x.n.Dims() != 3 {
			return nil, fmt.Errorf("fused.BatchedMatMul: %s %q has shape %v, want (batch, rows, cols)", x.role, x.n.Name(), x.n.Shape())
		}
	}
	if a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("fused.BatchedMatMul: %q is %v but %q is %v", a.Name(), a.Dtype(), b.Name(), b.Dtype())
	}
	op := &bmmOp{tA: transA, tB: transB}
	if _, err := op.InferShape(a.Shape(), b.Shape()); err != nil {
		return nil, fmt.Errorf("fused.BatchedMatMul: %w", err)
	}
	return opkit.Apply(op, a, b)
}

type bmmOp struct {
	opkit.Defaults
	tA, tB bool
	out    opkit.Buffer
}

func (op *bmmOp) Arity() int    { return 2 }
func (op *bmmOp) Type() hm.Type { return opkit.FnType(3, 3, 3) }

func (op *bmmOp) dims(a, b tensor.Shape) (batch, m, n, k int, err error) {
	if len(a) != 3 || len(b) != 3 {
		return 0, 0, 0, 0, fmt.Errorf("%v: shapes %v and %v, want (batch, rows, cols) each", op, a, b)
	}
	if a[0] != b[0] {
		return 0, 0, 0, 0, fmt.Errorf("%v: batch sizes differ: %v and %v", op, a, b)
	}
	m, n, k, err = (&matMulOp{tA: op.tA, tB: op.tB}).dims(a[1:], b[1:])
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("%v: inner dimensions differ: %v and %v", op, a, b)
	}
	return a[0], m, n, k, nil
}

func (op *bmmOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	a, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	b, err := opkit.ShapeArg(op, ds, 1)
	if err != nil {
		return nil, err
	}
	batch, m, n, _, err := op.dims(a, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{batch, m, n}, nil
}

func (op *bmmOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "a", "b")
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	batch, m, n, k, err := op.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	if a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("%v: a is %v but b is %v", op, a.Dtype(), b.Dtype())
	}
	c := op.out.Get(a.Dtype(), tensor.Shape{batch, m, n})
	lda, ldb := a.Shape()[2], b.Shape()[2]
	switch cd := c.Data().(type) {
	case []float32:
		bmm(op.tA, op.tB, batch, m, n, k, a.Float32s(), lda, b.Float32s(), ldb, cd)
	case []float64:
		bmm(op.tA, op.tB, batch, m, n, k, a.Float64s(), lda, b.Float64s(), ldb, cd)
	}
	return c, nil
}

func bmm[T graph.Float](tA, tB bool, batch, m, n, k int, a []T, lda int, b []T, ldb int, c []T) {
	sa, sb, sc := len(a)/batch, len(b)/batch, m*n
	for i := 0; i < batch; i++ {
		gemm.Gemm(tA, tB, m, n, k, 1, a[i*sa:(i+1)*sa], lda, b[i*sb:(i+1)*sb], ldb, 0, c[i*sc:(i+1)*sc], n)
	}
}

func (op *bmmOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ops.bmm(%t,%t)", op.tA, op.tB) }
func (op *bmmOp) Hashcode() uint32      { return opkit.HashOf(op) }
func (op *bmmOp) String() string {
	return "batched " + (&matMulOp{tA: op.tA, tB: op.tB}).String()
}
func (op *bmmOp) DiffWRT(n int) []bool { return opkit.AllTrue(n) }

// gradOps maps MatMul's derivative ops and argument order to batched ones.
func (op *bmmOp) gradOps() (da *bmmOp, ia [2]int, db *bmmOp, ib [2]int) {
	mda, ia, mdb, ib := (&matMulOp{tA: op.tA, tB: op.tB}).gradOps()
	return &bmmOp{tA: mda.tA, tB: mda.tB}, ia, &bmmOp{tA: mdb.tA, tB: mdb.tB}, ib
}

func (op *bmmOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 2 {
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
	return G.Nodes{dA, dB}, nil
}

func (op *bmmOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	vals, err := opkit.Values(op, inputs)
	if err != nil {
		return err
	}
	gv, err := opkit.OutGrad(op, output)
	if err != nil {
		return err
	}
	args := []G.Value{vals[0], vals[1], gv}
	da, ia, db, ib := op.gradOps()
	dA, err := da.Do(args[ia[0]], args[ia[1]])
	if err != nil {
		return err
	}
	if err := opkit.AccumulateGrad(op, inputs[0], dA); err != nil {
		return err
	}
	dB, err := db.Do(args[ib[0]], args[ib[1]])
	if err != nil {
		return err
	}
	return opkit.AccumulateGrad(op, inputs[1], dB)
}

var (
	_ G.ADOp = &bmmOp{}
	_ G.SDOp = &bmmOp{}
)
