//go:build !(darwin || freebsd || linux || netbsd)

package gemm

// BenchmarkOwn without a C library loader (Windows, …): the own GEMM
// alone, and no CPU-time metric.

import (
	"errors"
	"time"
)

// ownCPUTime reports 0: not measured here.
func ownCPUTime() time.Duration { return 0 }

type ownOpenBLAS struct{ setThreads func(int32) }

func ownLoadOpenBLAS() (*ownOpenBLAS, error) {
	return nil, errors.New("no C library loader on this platform")
}

func (*ownOpenBLAS) gemm(ownShape, any, int, any, int, any, int) {}
