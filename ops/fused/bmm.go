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
	op := newMatMul(transA, transB, false, true)
	if _, err := op.InferShape(a.Shape(), b.Shape()); err != nil {
		return nil, fmt.Errorf("fused.BatchedMatMul: %w", err)
	}
	return opkit.Apply(op, a, b)
}

// batchDims returns the batch size and m, n, k of every product.
func (op *matMulOp) batchDims(a, b tensor.Shape) (batch, m, n, k int, err error) {
	if len(a) != 3 || len(b) != 3 {
		return 0, 0, 0, 0, fmt.Errorf("%v: shapes %v and %v, want (batch, rows, cols) each", op, a, b)
	}
	if a[0] != b[0] {
		return 0, 0, 0, 0, fmt.Errorf("%v: batch sizes differ: %v and %v", op, a, b)
	}
	m, n, k, err = op.dims(a[1:], b[1:])
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("%v: inner dimensions differ: %v and %v", op, a, b)
	}
	return a[0], m, n, k, nil
}

// bmm computes c[i] = op(a[i])·op(b[i]) + β·c[i] for every batch entry i
// (one product when batch is 1). The op checked the shapes, so a product
// gemm refuses is a bug, returned rather than skipped.
func bmm[T graph.Float](tA, tB bool, batch, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T) error {
	sa, sb, sc := len(a)/batch, len(b)/batch, m*n
	for i := 0; i < batch; i++ {
		if err := gemm.Gemm(tA, tB, m, n, k, 1, a[i*sa:(i+1)*sa], lda, b[i*sb:(i+1)*sb], ldb, beta, c[i*sc:(i+1)*sc], n); err != nil {
			return err
		}
	}
	return nil
}
