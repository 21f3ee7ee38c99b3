package gemm

// Bad arguments on every backend: Gemm returns one error, naming the
// argument, whatever BLAS is in use, and leaves C untouched; no backend's
// Sgemm or Dgemm method panics on them.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/geluproject/gelu/graph"
)

// backends are the BLAS implementations on this machine: the own GEMM,
// gonum, and OpenBLAS when it loads (the test says so when it does not).
func backends(t *testing.T) []BLAS {
	impls := []BLAS{ownBLAS{}, gonumBLAS{}}
	if ob, err := LoadOpenBLAS(""); err == nil {
		impls = append(impls, ob)
	} else {
		t.Logf("OpenBLAS not tested: %v", err)
	}
	return impls
}

// badGemm is one call with inconsistent arguments; want is part of the
// error, naming the argument.
type badGemm struct {
	name          string
	tA, tB        bool
	m, n, k       int
	lda, ldb, ldc int
	la, lb, lc    int // slice lengths; a negative lc makes C overlap A (offset -lc into A's memory)
	want          string
}

// 64×64×64 products (large enough for OpenBLAS's C path), A, B and C of
// 4096 elements unless a case shortens one.
var badGemms = []badGemm{
	{"m<0", false, false, -1, 64, 64, 64, 64, 64, 4096, 4096, 4096, "m, n, k = -1, 64, 64, want all ≥ 0"},
	{"n<0", false, false, 64, -1, 64, 64, 64, 64, 4096, 4096, 4096, "m, n, k = 64, -1, 64, want all ≥ 0"},
	{"k<0", false, false, 64, 64, -1, 64, 64, 64, 4096, 4096, 4096, "m, n, k = 64, 64, -1, want all ≥ 0"},
	{"lda<k", false, false, 64, 64, 64, 63, 64, 64, 4096, 4096, 4096, "lda = 63 for a 64×64 matrix, want ≥ 64"},
	{"lda<m of Aᵀ", true, false, 64, 32, 16, 63, 32, 32, 4096, 4096, 4096, "lda = 63 for a 16×64 matrix, want ≥ 64"},
	{"lda=0, k=0", false, false, 64, 64, 0, 0, 64, 64, 4096, 4096, 4096, "lda = 0 for a 64×0 matrix, want ≥ 1"},
	{"ldb<n", false, false, 64, 64, 64, 64, 10, 64, 4096, 4096, 4096, "ldb = 10 for a 64×64 matrix, want ≥ 64"},
	{"ldb<k of Bᵀ", false, true, 64, 64, 32, 64, 31, 64, 4096, 4096, 4096, "ldb = 31 for a 64×32 matrix, want ≥ 32"},
	{"ldc<n", false, false, 64, 64, 64, 64, 64, 10, 4096, 4096, 4096, "ldc = 10 for a 64×64 matrix, want ≥ 64"},
	{"ldc<0", false, false, 64, 64, 64, 64, 64, -64, 4096, 4096, 4096, "ldc = -64 for a 64×64 matrix, want ≥ 64"},
	{"short a", false, false, 64, 64, 64, 64, 64, 64, 4095, 4096, 4096, "len(a) = 4095, want ≥ 4096"},
	{"short b", false, false, 64, 64, 64, 64, 64, 64, 4096, 100, 4096, "len(b) = 100, want ≥ 4096"},
	{"short c", false, false, 64, 64, 64, 64, 64, 64, 4096, 4096, 4032, "len(c) = 4032, want ≥ 4096"},
	{"huge lda", false, false, 64, 64, 64, math.MaxInt / 2, 64, 64, 4096, 4096, 4096, "does not fit in memory"},
	{"c overlaps a", false, false, 64, 64, 64, 64, 64, 64, 4096, 4096, -100, "c overlaps a"},
}

// operandsFor returns A, B and C for case bc: A and B of ones, C of sevens.
func operandsFor[T graph.Float](bc badGemm) (a, b, c []T) {
	a, b = make([]T, 8192), make([]T, bc.lb)
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 1
	}
	if bc.lc < 0 {
		c = a[-bc.lc : -bc.lc+4096]
	} else {
		c = make([]T, bc.lc)
	}
	for i := range c {
		c[i] = 7
	}
	return a[:bc.la], b, c
}

func gemmBadArgs[T graph.Float](t *testing.T) {
	for _, impl := range backends(t) {
		Use(impl)
		for _, bc := range badGemms {
			a, b, c := operandsFor[T](bc)
			before := append([]T(nil), c...)
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return Gemm(bc.tA, bc.tB, bc.m, bc.n, bc.k, 1, a, bc.lda, b, bc.ldb, 0, c, bc.ldc)
			}()
			if err == nil || !strings.HasPrefix(err.Error(), "gemm: ") || !strings.Contains(err.Error(), bc.want) {
				t.Errorf("%s, %s: Gemm returned %v, want an error containing %q", impl.Name(), bc.name, err, bc.want)
			}
			for i := range c {
				if c[i] != before[i] {
					t.Errorf("%s, %s: Gemm wrote c[%d] = %v (was %v)", impl.Name(), bc.name, i, c[i], before[i])
					break
				}
			}
		}
	}
}

// restoreBLAS puts the BLAS in use back as it was when the test ends.
func restoreBLAS(t *testing.T) {
	blasMu.RLock()
	impl, note := blasImpl, blasNote
	blasMu.RUnlock()
	t.Cleanup(func() {
		Use(impl)
		blasMu.Lock()
		blasNote = note
		blasMu.Unlock()
	})
}

func TestGemmBadArgumentsEveryBackend(t *testing.T) {
	restoreBLAS(t)
	t.Run("float32", gemmBadArgs[float32])
	t.Run("float64", gemmBadArgs[float64])
}

// The BLAS-style methods of the own GEMM and of OpenBLAS have no error
// result: bad arguments leave C untouched, without a panic. (gonum's own
// methods panic, as gonum documents; Gemm checks before it calls them.)
func TestBLASMethodsDoNotPanic(t *testing.T) {
	var impls []BLAS
	for _, impl := range backends(t) {
		if _, isGonum := impl.(gonumBLAS); !isGonum {
			impls = append(impls, impl)
		}
	}
	for _, impl := range impls {
		for _, bc := range badGemms {
			ta, tb := blas.NoTrans, blas.NoTrans
			if bc.tA {
				ta = blas.Trans
			}
			if bc.tB {
				tb = blas.Trans
			}
			a, b, c := operandsFor[float32](bc)
			a64, b64, c64 := operandsFor[float64](bc)
			panicked := func() (p any) {
				defer func() { p = recover() }()
				impl.Sgemm(ta, tb, bc.m, bc.n, bc.k, 1, a, bc.lda, b, bc.ldb, 0, c, bc.ldc)
				impl.Dgemm(ta, tb, bc.m, bc.n, bc.k, 1, a64, bc.lda, b64, bc.ldb, 0, c64, bc.ldc)
				impl.Sgemm(blas.Transpose('x'), tb, bc.m, bc.n, bc.k, 1, a, bc.lda, b, bc.ldb, 0, c, bc.ldc)
				return nil
			}()
			if panicked != nil {
				t.Errorf("%s, %s: panic %v", impl.Name(), bc.name, panicked)
			}
			for i := range c {
				if c[i] != 7 || c64[i] != 7 {
					t.Errorf("%s, %s: wrote c[%d] = %v, %v", impl.Name(), bc.name, i, c[i], c64[i])
					break
				}
			}
		}
	}
}

// A type defined on float32 or float64 goes to the BLAS as that type.
func TestGemmDefinedFloatTypes(t *testing.T) {
	type f32 float32
	type f64 float64
	a, b := []f32{1, 2, 3, 4}, []f32{5, 6, 7, 8} // [1 2; 3 4]·[5 6; 7 8] = [19 22; 43 50]
	c := make([]f32, 4)
	if err := Gemm(false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2); err != nil || c[0] != 19 || c[1] != 22 || c[2] != 43 || c[3] != 50 {
		t.Errorf("float32-based: %v, %v", c, err)
	}
	a64, b64, c64 := []f64{1, 2, 3, 4}, []f64{5, 6, 7, 8}, make([]f64, 4)
	if err := Gemm(false, false, 2, 2, 2, 1, a64, 2, b64, 2, 0, c64, 2); err != nil || c64[0] != 19 || c64[1] != 22 || c64[2] != 43 || c64[3] != 50 {
		t.Errorf("float64-based: %v, %v", c64, err)
	}
}
