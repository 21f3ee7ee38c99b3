// Package gemm is the matrix-product backend: every matrix product of the
// project goes through Gemm, so the implementation is chosen in one place.
// At start-up it loads OpenBLAS if the system has it (libopenblas.so.0, at
// run time through purego: no cgo, and a plain go build needs no C
// library) and otherwise uses gonum's pure-Go BLAS. The environment
// variable GELU_BLAS overrides the choice:
//
//	GELU_BLAS=gonum            pure Go, never load a C library
//	GELU_BLAS=openblas         OpenBLAS from the usual library names (the default)
//	GELU_BLAS=/path/to/lib.so  OpenBLAS from this file
//
// The same implementation is handed to gorgonia, so its own MatMul and
// friends use it too.
//
// Minimal use:
//
//	fmt.Println(gemm.Name()) // e.g. "OpenBLAS 0.3.21 SkylakeX (libopenblas.so.0, 2 threads)"
//	gemm.SetThreads(1)       // small matrices, or several trainings at once
//	gemm.Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n) // C = A·Bᵀ
package gemm
