package gemm

// Matrix products for the fused ops. Every GEMM in this package goes through
// gemm, so the BLAS is chosen in one place, at start-up (defaultBLAS): the
// own GEMM where its AVX-512 kernels run, OpenBLAS (loaded at run time,
// without cgo: see blas_openblas.go) where they do not and the library is
// installed, the own GEMM's AVX2 kernels without it, gonum's pure Go where
// the own GEMM has no assembly. The environment variable GELU_BLAS
// overrides the choice:
//
//	GELU_BLAS=own              the project's own GEMM (assembly), never load a C library
//	GELU_BLAS=gonum            pure Go, never load a C library
//	GELU_BLAS=openblas         OpenBLAS from the usual library names
//	GELU_BLAS=/path/to/lib.so  OpenBLAS from this file
//	GELU_BLAS=auto (or unset)  the default above
//
// The same implementation is handed to gorgonia (gorgonia.Use), so its own
// MatMul, MatVecMul and friends use it too.

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/geluproject/gelu/graph"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
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

// blasEnv is the environment variable that selects the BLAS at start-up.
const blasEnv = "GELU_BLAS"

var (
	blasMu   sync.RWMutex
	blasImpl BLAS = gonumBLAS{}
	// blasNote says why the default is not what GELU_BLAS asked for, for
	// Name.
	blasNote string
)

func init() {
	impl, note := defaultBLAS(os.Getenv(blasEnv))
	blasImpl, blasNote = impl, note
	useInGorgonia(impl)
}

// defaultBLAS picks the implementation for the value of GELU_BLAS and, when
// it is not the one asked for, says why. The default ("" or auto) is the
// own GEMM where its AVX-512 kernels run, unless this CPU model is one on
// which OpenBLAS measured faster (openBLASFirst); elsewhere OpenBLAS when
// it loads (the own AVX2 kernels are slower than OpenBLAS's Haswell ones),
// else fallback. OpenBLAS itself is loaded only when it is used.
func defaultBLAS(env string) (BLAS, string) {
	env = strings.TrimSpace(env)
	switch strings.ToLower(env) {
	case "gonum", "go", "purego", "pure-go":
		return gonumBLAS{}, ""
	case "own":
		return ownBLAS{}, ""
	case "", "auto":
		if preferOwn(ownPathName(), CPUModel()) {
			return ownBLAS{}, ""
		}
		fallthrough
	case "openblas":
		ob, err := LoadOpenBLAS("")
		if err != nil {
			return fallback(), err.Error()
		}
		return ob, ""
	}
	if !strings.ContainsRune(env, '/') {
		return fallback(), fmt.Sprintf("%s=%q not understood; want own, gonum, openblas or a library path", blasEnv, env)
	}
	ob, err := LoadOpenBLAS(env)
	if err != nil {
		return fallback(), err.Error()
	}
	return ob, ""
}

// ownPathName is the name of the own GEMM's path in use (GELU_GEMM_KERNEL
// or the CPU's best), chosen here if own.go's init has not run yet (this
// file's init runs first).
func ownPathName() string {
	if ownActive.Load() == nil {
		ownSelectFromEnv()
	}
	return ownActive.Load().name
}

// fallback is the implementation used without OpenBLAS.
func fallback() BLAS {
	if ownBestPath() != &ownGenericPath {
		return ownBLAS{}
	}
	return gonumBLAS{}
}

// ownBLAS is the project's own GEMM for matrix products and gonum's pure
// Go for the rest of BLAS (which gorgonia may call).
type ownBLAS struct {
	gonum.Implementation
	own Own
}

func (b ownBLAS) Name() string { return b.own.Name() }

func (b ownBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	b.own.Sgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

func (b ownBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	b.own.Dgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

// SetThreads sets how many cores the own GEMM splits large products over.
func (b ownBLAS) SetThreads(n int) error { return b.own.SetThreads(n) }

// useInGorgonia makes gorgonia's own matrix ops use impl when it is a
// complete BLAS (OpenBLAS and gonum are; a user's Level-3-only BLAS is not,
// and gorgonia keeps what it had).
func useInGorgonia(impl BLAS) {
	if full, ok := impl.(G.BLAS); ok {
		G.Use(full) // also sets tensor.Use
	}
}

// Use makes every matrix product in this package use impl, and
// gorgonia's too if impl implements all of gorgonia.BLAS. Use(nil)
// restores gonum's pure-Go BLAS.
func Use(impl BLAS) {
	if impl == nil {
		impl = gonumBLAS{}
	}
	blasMu.Lock()
	defer blasMu.Unlock()
	blasImpl, blasNote = impl, ""
	useInGorgonia(impl)
}

// Name reports which BLAS the ops use, e.g.
// "OpenBLAS 0.3.21 SkylakeX (libopenblas.so.0, 2 threads)", and, when the
// pure-Go fallback was chosen at start-up, why OpenBLAS was not used.
func Name() string {
	blasMu.RLock()
	defer blasMu.RUnlock()
	if blasNote != "" {
		return blasImpl.Name() + "; " + blasNote
	}
	return blasImpl.Name()
}

// SetThreads sets how many threads the BLAS in use runs a large matrix
// product on: the parts the own GEMM, or OpenBLAS, splits it into over
// ops/parallel's workers (OpenBLAS's own thread count instead when the
// environment set one); the pure-Go BLAS reports an error. Small products
// (below 2²³ multiply-adds a part) run on one thread whatever the setting,
// and a program that already trains several models in parallel is faster
// with 1.
func SetThreads(n int) error {
	if t, ok := currentBLAS().(interface{ SetThreads(int) error }); ok {
		return t.SetThreads(n)
	}
	return fmt.Errorf("ops: %s has no thread setting", Name())
}

func currentBLAS() BLAS {
	blasMu.RLock()
	defer blasMu.RUnlock()
	return blasImpl
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k, op(B) is k×n and C is m×n. Inconsistent arguments (a
// negative size, a leading dimension below the row width, a slice too
// short, C overlapping A or B) return the error CheckSgemm gives, naming
// the argument, and leave C untouched, whichever BLAS is in use; Gemm
// never panics on them.
func Gemm[T graph.Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) error {
	if err := ownCheck(tA, tB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	impl := currentBLAS()
	// T is float32 or float64, or a type defined on one of them: its size
	// tells which.
	if unsafe.Sizeof(alpha) == 4 {
		impl.Sgemm(ta, tb, m, n, k, float32(alpha), asFloats[float32](a), lda, asFloats[float32](b), ldb, float32(beta), asFloats[float32](c), ldc)
	} else {
		impl.Dgemm(ta, tb, m, n, k, float64(alpha), asFloats[float64](a), lda, asFloats[float64](b), ldb, float64(beta), asFloats[float64](c), ldc)
	}
	return nil
}

// asFloats views x, whose element type has F's representation, as []F.
func asFloats[F, T graph.Float](x []T) []F {
	return unsafe.Slice((*F)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// isTrans reads a BLAS transpose flag: whether op(X) is Xᵀ, and whether the
// flag is valid.
func isTrans(t blas.Transpose) (trans, ok bool) {
	switch t {
	case blas.NoTrans:
		return false, true
	case blas.Trans, blas.ConjTrans:
		return true, true
	}
	return false, false
}

// storedShapes returns the shapes A and B are stored in (rowsA × colsA,
// rowsB × colsB) when op(A) is m×k and op(B) is k×n.
func storedShapes(tA, tB bool, m, n, k int) (rowsA, colsA, rowsB, colsB int) {
	rowsA, colsA, rowsB, colsB = m, k, k, n
	if tA {
		rowsA, colsA = k, m
	}
	if tB {
		rowsB, colsB = n, k
	}
	return rowsA, colsA, rowsB, colsB
}
