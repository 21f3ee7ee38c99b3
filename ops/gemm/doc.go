// Package gemm holds the project's matrix products (C = alpha·op(A)·op(B) +
// beta·C, row-major). Besides the BLAS back ends it has its own packed,
// cache-blocked GEMM (own*.go): AVX-512 or AVX2+FMA micro-kernels generated
// by ./asm with avo, a portable Go fallback, and long-lived workers for the
// large products.
//
//	gemm.Sgemm(false, true, m, n, k, 1, x, k, w, k, 0, y, n) // y = x·wᵀ
//	if err := gemm.CheckSgemm(false, true, m, n, k, x, k, w, k, y, n); err != nil { ... }
//	var impl gemm.Own // Sgemm/Dgemm with gonum's blas.Transpose flags, Name, SetThreads
//
// GELU_GEMM_KERNEL=avx512|avx2|generic forces a micro-kernel path.
package gemm
