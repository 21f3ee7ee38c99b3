//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package gemm

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas/gonum"
)

// OpenBLAS is not available on this platform: LoadOpenBLAS always fails and
// the package uses gonum. The type, with the fields the platform-neutral
// code reads, exists so that code naming it builds everywhere.
type OpenBLAS struct {
	gonum.Implementation
	version, core string // never set: no library is ever loaded
}

// LoadOpenBLAS reports that OpenBLAS cannot be loaded on this platform.
func LoadOpenBLAS(path string) (*OpenBLAS, error) {
	return nil, fmt.Errorf("ops: OpenBLAS not loaded: run-time loading is not supported on %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Name implements BLAS.
func (*OpenBLAS) Name() string { return "OpenBLAS (unavailable)" }

// Threads returns 1.
func (*OpenBLAS) Threads() int { return 1 }

// SetThreads fails: there is no library.
func (*OpenBLAS) SetThreads(n int) error {
	return fmt.Errorf("ops: OpenBLAS.SetThreads(%d): OpenBLAS is not loaded", n)
}
