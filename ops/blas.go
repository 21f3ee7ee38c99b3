package ops

// Matrix products for the fused ops. Every GEMM in this package goes
// through gemm32/gemm64 so that a faster BLAS can be plugged in at one place
// (see UseBLAS); the default is gonum's pure-Go implementation.

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BLAS is the subset of a BLAS library the ops use.
type BLAS interface {
	blas.Float32Level3
	blas.Float64Level3
	// Name identifies the implementation, e.g. "gonum (pure Go)".
	Name() string
}

type gonumBLAS struct{ gonum.Implementation }

func (gonumBLAS) Name() string { return "gonum (pure Go)" }

var (
	blasMu   sync.RWMutex
	blasImpl BLAS = gonumBLAS{}
)

// UseBLAS makes every matrix product in this package use impl.
func UseBLAS(impl BLAS) {
	blasMu.Lock()
	defer blasMu.Unlock()
	blasImpl = impl
}

// BLASName reports which BLAS the ops use.
func BLASName() string {
	blasMu.RLock()
	defer blasMu.RUnlock()
	return blasImpl.Name()
}

func currentBLAS() BLAS {
	blasMu.RLock()
	defer blasMu.RUnlock()
	return blasImpl
}

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k, op(B) is k×n and C is m×n.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	impl := currentBLAS()
	switch c := any(c).(type) {
	case []float32:
		impl.Sgemm(ta, tb, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		impl.Dgemm(ta, tb, m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	}
}
