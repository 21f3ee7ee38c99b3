package gemm

// Fused epilogues: work on C (a bias, an elementwise function) that the own
// GEMM does on each strip of C — mr rows by at most nc columns, in L1 or
// L2 — instead of in passes over the whole matrix before or after the
// product: the bias is copied into a strip just before its first slice of
// the product is added to it (β = 1), the finisher runs on a strip right
// after its last. With OpenBLAS or gonum the same results come from a pass
// before (the bias) and after (the finisher).

import (
	"github.com/geluproject/gelu/graph"
)

// Finisher finishes blocks of a product's C. Finish is called once for
// each block of rows i0:i1 and columns j0:j1 of C (row-major, row stride
// ldc) when its values are final; the blocks cover C exactly once. Blocks
// may be finished at the same time on different goroutines, so Finish
// touches only its own block (and reads what it likes).
type Finisher[T graph.Float] interface {
	Finish(c []T, ldc, i0, i1, j0, j1 int)
}

// Epilogue is what GemmEpilogue does to C besides the product.
type Epilogue[T graph.Float] struct {
	// Bias, when not nil, is added to every row of C (n elements).
	Bias []T
	// Finish, when not nil, is applied to the final values (after the
	// bias).
	Finish Finisher[T]
}

// GemmEpilogue computes C = op(A)·op(B) + 1·biasᵀ (C is not read), then
// epi.Finish on C, with the shapes and strides of Gemm.
//
// The result is bit for bit that of filling every row of C with the bias,
// calling Gemm with β = 1, then finishing C: the own GEMM does exactly that,
// a strip at a time. Other BLAS libraries take the fill-and-β path. Invalid
// arguments leave C untouched and Finish uncalled on the own GEMM, as
// Sgemm does.
func GemmEpilogue[T graph.Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, epi Epilogue[T]) {
	if epi.Bias != nil && len(epi.Bias) < n {
		return
	}
	if _, own := currentBLAS().(ownBLAS); own {
		if ownCheck(tA, tB, m, n, k, a, lda, b, ldb, c, ldc) == nil {
			ownGemmEpi(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, ownEpi[T]{bias: epi.Bias, fin: epi.Finish})
		}
		return
	}
	var beta T
	if epi.Bias != nil {
		for i := range m {
			copy(c[i*ldc:i*ldc+n], epi.Bias[:n])
		}
		beta = 1
	}
	Gemm(tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
	if epi.Finish != nil && m > 0 && n > 0 {
		epi.Finish.Finish(c, ldc, 0, m, 0, n)
	}
}

// ownEpi is an Epilogue inside the own GEMM.
type ownEpi[T graph.Float] struct {
	bias []T
	fin  Finisher[T]
}

// whole applies the epilogue to all of C when no product was computed
// (C = β·C already): the bias is copied, not added, as a fill with β = 1
// would leave it (a −0 bias stays −0).
func (e ownEpi[T]) whole(m, n int, c []T, ldc int) {
	if e.bias != nil {
		for i := range m {
			copy(c[i*ldc:i*ldc+n], e.bias[:n])
		}
	}
	if e.fin != nil {
		e.fin.Finish(c, ldc, 0, m, 0, n)
	}
}

// fill copies the bias into rows i0:i1, columns j0:j1 of C (in C's own
// coordinates), just before the micro-kernels add the first slice of the
// product to it with β = 1: a pre-filled C, one strip at a time, in cache.
func (e ownEpi[T]) fill(c []T, ldc, i0, i1, j0, j1 int) {
	bias := e.bias[j0:j1]
	for i := i0; i < i1; i++ {
		copy(c[i*ldc+j0:i*ldc+j1], bias)
	}
}
