//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package gemm

// One owner of the cores at a time. OpenBLAS's threads and ops/parallel's
// workers are two pools for the same cores: a GPT's attention runs its
// (batch, head) products on the workers, and each product handed to an
// OpenBLAS of 2 threads then wakes OpenBLAS's threads too, four threads on
// two cores (a GPT step several times slower than on either pool alone;
// examples/benchmark's gpt workloads show it). So, by default, OpenBLAS
// runs every product on the calling thread (openblas_set_num_threads(1))
// and this package splits a large product by rows of C over the workers,
// as the own GEMM does, with the same results bit for bit as unsplit; a
// product called from inside a parallel loop runs whole on its worker.
// When the environment sets OpenBLAS's thread count (OPENBLAS_NUM_THREADS,
// GOTO_NUM_THREADS or OMP_NUM_THREADS: the user has chosen), OpenBLAS runs
// each product on its own threads, and with more than one of them one
// product at a time: a product called while another runs waits for it
// (OpenBLAS's split of a product is then its own, and its results may
// change with its thread count).

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/geluproject/gelu/ops/parallel"
	"gonum.org/v1/gonum/blas"
)

// coreOwner is an OpenBLAS's threading (see above).
type coreOwner struct {
	// workers: products are split over ops/parallel's workers, OpenBLAS
	// on one thread; else OpenBLAS runs them on lib threads of its own.
	workers bool
	parts   atomic.Int64 // workers: most parts of a product; 0: GOMAXPROCS at first use
	lib     atomic.Int32 // !workers: OpenBLAS's thread count
	one     sync.Mutex   // !workers, lib > 1: one product at a time
}

// init sets the owner of the cores for a freshly loaded OpenBLAS.
func (o *coreOwner) init(ob *OpenBLAS, workers bool) {
	o.workers = workers
	if workers {
		ob.setNum(1)
		return
	}
	o.lib.Store(ob.getNum())
}

// threads is how many threads a large product runs on.
func (o *coreOwner) threads() int {
	if !o.workers {
		return int(o.lib.Load())
	}
	if n := o.parts.Load(); n > 0 {
		return int(n)
	}
	o.parts.CompareAndSwap(0, int64(runtime.GOMAXPROCS(0)))
	return int(o.parts.Load())
}

// setThreads sets it (n ≥ 1).
func (o *coreOwner) setThreads(ob *OpenBLAS, n int) {
	if o.workers {
		o.parts.Store(int64(n))
		return
	}
	ob.setNum(int32(n))
	o.lib.Store(int32(n))
}

// split is how many parts an m×n×k product is split into, by rows of C
// (obParts).
func (o *coreOwner) split(m, n, k int) int {
	if !o.workers {
		return 1
	}
	return obParts(o.threads(), m, n, k)
}

// obCall is a product split into parts (a parallel.Body over the parts),
// pooled so that a call allocates nothing.
type obCall[T float32 | float64] struct {
	ob            *OpenBLAS
	tA, tB        blas.Transpose
	m, n, k       int
	alpha, beta   T
	a, b, c       []T
	lda, ldb, ldc int
	bounds        []int // part p is rows bounds[p]:bounds[p+1] of C
}

var (
	obCallS parallel.FreeList[obCall[float32]]
	obCallD parallel.FreeList[obCall[float64]]
)

func obCallList[T float32 | float64]() *parallel.FreeList[obCall[T]] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(&obCallS).(*parallel.FreeList[obCall[T]])
	}
	return any(&obCallD).(*parallel.FreeList[obCall[T]])
}

// obGemm runs a checked product in OpenBLAS on the cores' owner: split
// over the workers, or whole on OpenBLAS's own threads.
func obGemm[T float32 | float64](ob *OpenBLAS, tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	parts := ob.cores.split(m, n, k)
	if parts <= 1 {
		obCallC(ob, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	call := obCallList[T]().Get()
	*call = obCall[T]{ob: ob, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, b: b, c: c,
		lda: lda, ldb: ldb, ldc: ldc, bounds: call.bounds[:0]}
	tiles := m / obRows // the last part takes the rows past the last whole tile
	for p := range parts {
		call.bounds = append(call.bounds, tiles*p/parts*obRows)
	}
	call.bounds = append(call.bounds, m)
	parallel.For(parts, 1, call)
	call.a, call.b, call.c = nil, nil, nil // drop the caller's slices
	obCallList[T]().Put(call)
}

// Run computes parts lo:hi: rows of C from the same rows of op(A), each a
// product of its own in OpenBLAS. The bounds keep each row of C the same
// computation as in the whole product (see obRows), so the result does
// not depend on the number of parts (TestOpenBLASSplitBitIdentical).
func (call *obCall[T]) Run(lo, hi int) {
	for p := lo; p < hi; p++ {
		i, j := call.bounds[p], call.bounds[p+1]
		if i >= j {
			continue
		}
		a := call.a[i:] // op(A) = Aᵀ: its rows are A's columns
		if call.tA == blas.NoTrans {
			a = call.a[i*call.lda:]
		}
		obCallC(call.ob, call.tA, call.tB, j-i, call.n, call.k, call.alpha, a, call.lda, call.b, call.ldb, call.beta, call.c[i*call.ldc:], call.ldc)
	}
}

// obCallC hands one product to OpenBLAS, waiting for any other product
// when OpenBLAS runs on threads of its own.
func obCallC[T float32 | float64](ob *OpenBLAS, tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if !ob.cores.workers && ob.cores.lib.Load() > 1 {
		ob.cores.one.Lock()
		defer ob.cores.one.Unlock()
	}
	switch c := any(c).(type) {
	case []float32:
		ob.sgemmC(tA, tB, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		ob.dgemmC(tA, tB, m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	}
}
