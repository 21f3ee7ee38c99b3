package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// epiSquare is a Finisher that sets x → x² + x (different from anything
// the product does, so a block finished twice or not at all shows) and
// counts how often each element was finished.
type epiSquare[T ownFloat] struct {
	seen []int // by offset in C
}

func (f *epiSquare[T]) Finish(c []T, ldc, i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			x := c[i*ldc+j]
			c[i*ldc+j] = x*x + x
			f.seen[i*ldc+j]++
		}
	}
}

// epiExpected is the path GemmEpilogue replaces: C filled with the bias
// rows, the product with β = 1, then the finisher over all of C.
func epiExpected[T ownFloat](c ownCase, a []T, lda int, b []T, ldb int, cm []T, ldc int, bias []T, fin bool) {
	beta := T(0)
	if bias != nil {
		for i := range c.m {
			copy(cm[i*ldc:i*ldc+c.n], bias)
		}
		beta = 1
	}
	ownGemm(c.tA, c.tB, c.m, c.n, c.k, 1, a, lda, b, ldb, beta, cm, ldc)
	if fin && c.m > 0 && c.n > 0 {
		(&epiSquare[T]{seen: make([]int, len(cm))}).Finish(cm, ldc, 0, c.m, 0, c.n)
	}
}

func epiCheck[T ownFloat](t *testing.T, cases []ownCase) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 11))
	for _, c := range cases {
		for _, withBias := range []bool{false, true} {
			for _, fin := range []bool{false, true} {
				if !withBias && !fin {
					continue
				}
				a, lda, b, ldb, cm, ldc := ownOperands[T](c, r)
				var bias []T
				if withBias {
					bias = make([]T, c.n)
					for j := range bias {
						bias[j] = T(r.NormFloat64())
					}
					if c.n > 0 {
						bias[0] = T(negZero) // a −0 bias must survive k = 0
					}
				}
				want := slices.Clone(cm)
				epiExpected(c, a, lda, b, ldb, want, ldc, bias, fin)
				got := slices.Clone(cm)
				epi := Epilogue[T]{Bias: bias}
				f := &epiSquare[T]{seen: make([]int, len(cm))}
				if fin {
					epi.Finish = f
				}
				ownGemmEpi(c.tA, c.tB, c.m, c.n, c.k, 1, a, lda, b, ldb, 0, got, ldc, ownEpi[T]{bias: epi.Bias, fin: epi.Finish})
				name := fmt.Sprintf("%T %v bias=%v finish=%v", T(0), c, withBias, fin)
				for i := range got {
					if !ownSameBits(got[i], want[i]) {
						t.Fatalf("%s: element %d (row %d, col %d) = %v, want %v (prefilled bias, β = 1)", name, i, i/ldc, i%ldc, got[i], want[i])
					}
				}
				if fin {
					for i := range f.seen {
						inC := i/ldc < c.m && i%ldc < c.n
						if want := map[bool]int{true: 1, false: 0}[inC]; f.seen[i] != want {
							t.Fatalf("%s: element %d finished %d times, want %d", name, i, f.seen[i], want)
						}
					}
				}
			}
		}
	}
}

var negZero = func() float64 { z := 0.0; return -z }()

// ownSameBits reports whether x and y have the same bits (so −0 ≠ +0).
func ownSameBits[T ownFloat](x, y T) bool {
	switch x := any(x).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(y).(float32))
	default:
		return math.Float64bits(any(x).(float64)) == math.Float64bits(any(y).(float64))
	}
}

// TestGemmEpilogueBitIdentical: the bias added to each strip after the
// first slice of the inner dimension, and the finisher applied to each
// strip after the last, give exactly the prefilled-bias, β = 1 product
// finished afterwards, on every kernel path, on and off the small-matrix
// path, in one part and split over threads (k > kc included: 257 and 300
// against kc = 256 and 128).
func TestGemmEpilogueBitIdentical(t *testing.T) {
	cases := ownCases(3, 40)
	if ownRaceEnabled || testing.Short() {
		cases = cases[:20]
	}
	prevSmall, prevThreads := ownSmallMax, ownThreadCount()
	t.Cleanup(func() { ownSmallMax = prevSmall; _ = Own{}.SetThreads(prevThreads) })
	for _, small := range []int{prevSmall, 0} {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("small%d/threads%d", small, threads), func(t *testing.T) {
				ownSmallMax = small
				_ = Own{}.SetThreads(threads)
				ownForEachPath(t, func(t *testing.T) {
					ks, kd := ownKernelOf[float32](), ownKernelOf[float64]()
					savedS, savedD := ks.minWorkPerPart, kd.minWorkPerPart
					ks.minWorkPerPart, kd.minWorkPerPart = 1<<12, 1<<12
					defer func() { ks.minWorkPerPart, kd.minWorkPerPart = savedS, savedD }()
					epiCheck[float32](t, cases)
					epiCheck[float64](t, cases)
				})
			})
		}
	}
}

// TestGemmEpilogueOtherBLAS: with gonum's BLAS, GemmEpilogue prefills the
// bias and finishes C afterwards; the result is the own GEMM's within
// float rounding (another summation order), and every element is
// finished once.
func TestGemmEpilogueOtherBLAS(t *testing.T) {
	prev := currentBLAS()
	t.Cleanup(func() { Use(prev) })
	for _, own := range []bool{true, false} {
		if own {
			Use(ownBLAS{})
		} else {
			Use(gonumBLAS{})
		}
		const m, n, k = 37, 45, 300
		r := rand.New(rand.NewPCG(1, 2))
		c := ownCase{m: m, n: n, k: k, tB: true, alpha: 1}
		a, lda, b, ldb, cm, ldc := ownOperands[float64](c, r)
		bias := make([]float64, n)
		for j := range bias {
			bias[j] = r.NormFloat64()
		}
		f := &epiSquare[float64]{seen: make([]int, len(cm))}
		GemmEpilogue(c.tA, c.tB, m, n, k, a, lda, b, ldb, cm, ldc, Epilogue[float64]{Bias: bias, Finish: f})
		want, bound := ownReference(c, a, lda, b, ldb, make([]float64, len(cm)), ldc)
		for i := range m {
			for j := range n {
				p := want[i*n+j] + bias[j]
				x := p*p + p
				// The product's bound and the bias's rounding, carried
				// through x² + x (derivative 2x + 1).
				tol := (bound[i*n+j] + 1e-15*abs(p)) * (2*abs(p) + 1 + 1e-6)
				if got := cm[i*ldc+j]; abs(got-x) > tol+1e-12 || f.seen[i*ldc+j] != 1 {
					t.Fatalf("own=%v: C[%d,%d] = %v (finished %d times), want %v ± %g, once", own, i, j, got, f.seen[i*ldc+j], x, tol)
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
