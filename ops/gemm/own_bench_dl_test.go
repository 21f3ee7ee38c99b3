//go:build darwin || freebsd || linux || netbsd

package gemm

// What BenchmarkOwn needs from the system where purego can load a C
// library: the process's CPU time, and OpenBLAS.

import (
	"syscall"
	"time"

	"github.com/ebitengine/purego"
)

// ownCPUTime is the user and system time of the whole process so far.
func ownCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ownOpenBLAS is just enough of OpenBLAS for the comparison.
type ownOpenBLAS struct {
	sgemm      func(order, tA, tB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	dgemm      func(order, tA, tB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	setThreads func(n int32)
}

func ownLoadOpenBLAS() (*ownOpenBLAS, error) {
	var h uintptr
	var err error
	for _, name := range []string{"libopenblas.so.0", "libopenblas.so"} {
		if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	ob := new(ownOpenBLAS)
	for _, s := range []struct {
		fn   any
		name string
	}{{&ob.sgemm, "cblas_sgemm"}, {&ob.dgemm, "cblas_dgemm"}, {&ob.setThreads, "openblas_set_num_threads"}} {
		sym, err := purego.Dlsym(h, s.name)
		if err != nil {
			return nil, err
		}
		purego.RegisterFunc(s.fn, sym)
	}
	return ob, nil
}

func (ob *ownOpenBLAS) gemm(s ownShape, a any, lda int, b any, ldb int, c any, ldc int) {
	const rowMajor, noTrans, trans = 101, 111, 112
	ta, tb := int32(noTrans), int32(noTrans)
	if s.tA {
		ta = trans
	}
	if s.tB {
		tb = trans
	}
	switch a := a.(type) {
	case []float32:
		ob.sgemm(rowMajor, ta, tb, int32(s.m), int32(s.n), int32(s.k), 1, &a[0], int32(lda), &b.([]float32)[0], int32(ldb), 0, &c.([]float32)[0], int32(ldc))
	case []float64:
		ob.dgemm(rowMajor, ta, tb, int32(s.m), int32(s.n), int32(s.k), 1, &a[0], int32(lda), &b.([]float64)[0], int32(ldb), 0, &c.([]float64)[0], int32(ldc))
	}
}
