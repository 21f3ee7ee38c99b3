package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/tensor"
)

// ownCase is one product to test: shapes, flags, strides (extra columns
// beyond the width) and scalars.
type ownCase struct {
	tA, tB           bool
	m, n, k          int
	padA, padB, padC int
	alpha, beta      float64
	nanC             bool // C starts as NaN (only with beta == 0)
}

func (c ownCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d pad=%d,%d,%d alpha=%g beta=%g nanC=%v",
		c.tA, c.tB, c.m, c.n, c.k, c.padA, c.padB, c.padC, c.alpha, c.beta, c.nanC)
}

// ownCases returns fixed corner cases and then seeded random ones: sizes
// around the tile and block edges of every kernel (mr 4, 6, 12; nr 4, 8,
// 16, 32; kc 128, 256; mc 144; nc 256, 512), degenerate shapes, and
// products big enough to be split over threads.
func ownCases(seed uint64, random int) []ownCase {
	cs := []ownCase{
		{m: 1, n: 1, k: 1, alpha: 1},
		{m: 1, n: 37, k: 19, alpha: 1},
		{m: 37, n: 1, k: 19, alpha: 1, tA: true, tB: true},
		{m: 13, n: 33, k: 0, alpha: 1, beta: 0.5},
		{m: 13, n: 33, k: 0, alpha: 1, beta: 0, nanC: true},
		{m: 0, n: 33, k: 5, alpha: 1, beta: 2},
		{m: 7, n: 0, k: 5, alpha: 1, beta: 2},
		{m: 12, n: 32, k: 256, alpha: 1},
		{m: 25, n: 65, k: 257, alpha: -1.5, beta: 1, tA: true},
		{m: 145, n: 513, k: 129, alpha: 0.5, beta: -2, tB: true},
		{m: 150, n: 140, k: 300, alpha: 1, beta: 0, nanC: true, tA: true, tB: true, padA: 3, padB: 1, padC: 5},
		{m: 9, n: 9, k: 9, alpha: 0, beta: 3},
		{m: 9, n: 9, k: 9, alpha: 0, beta: 0, nanC: true},
		// A single A panel: the kernels read B in place, the narrow last
		// panel packed (B's padding is NaN, so reading past a row shows).
		{m: 10, n: 70, k: 300, alpha: 1, beta: 1, tA: true, padB: 3},
		{m: 4, n: 33, k: 5, alpha: 2, padB: 1, padC: 2},
		// Narrow C, computed as Cᵀ by the assembly kernels.
		{m: 128, n: 10, k: 128, alpha: 1, beta: 0.5, tA: true, padC: 3},
		{m: 131, n: 7, k: 300, alpha: -1, beta: 0, nanC: true, tB: true, padA: 2, padC: 1},
	}
	r := rand.New(rand.NewPCG(seed, 0x6e6d))
	edges := []int{1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65}
	size := func(big int) int {
		switch r.IntN(4) {
		case 0:
			return edges[r.IntN(len(edges))]
		case 1:
			return r.IntN(big + 1)
		default:
			return 1 + r.IntN(100)
		}
	}
	scalars := []float64{0, 1, -1, 0.5, 2.25}
	for range random {
		c := ownCase{tA: r.IntN(2) == 1, tB: r.IntN(2) == 1, m: size(200), n: size(600), k: size(300),
			padA: r.IntN(2) * r.IntN(4), padB: r.IntN(2) * r.IntN(4), padC: r.IntN(2) * r.IntN(4)}
		c.alpha = scalars[1+r.IntN(len(scalars)-1)]
		if r.IntN(8) == 0 {
			c.alpha = 0
		}
		if r.IntN(5) == 0 {
			c.alpha = r.NormFloat64()
		}
		c.beta = scalars[r.IntN(len(scalars))]
		c.nanC = c.beta == 0 && r.IntN(2) == 0
		if c.m*c.n*c.k > 3e6 { // keep the naive reference cheap
			c.k = 3e6 / max(1, c.m*c.n)
		}
		cs = append(cs, c)
	}
	return cs
}

// ownOperands makes the stored A, B and C of a case with their strides;
// padding columns hold NaN, so reading them would show in C, and C's
// padding holds a sentinel that must survive.
func ownOperands[T ownFloat](c ownCase, r *rand.Rand) (a []T, lda int, b []T, ldb int, cm []T, ldc int) {
	rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
	fill := func(rows, cols, pad int, pads T) ([]T, int) {
		ld := max(1, cols+pad)
		x := make([]T, rows*ld)
		for i := range rows {
			for j := range ld {
				if j < cols {
					x[i*ld+j] = T(r.NormFloat64())
				} else {
					x[i*ld+j] = pads
				}
			}
		}
		return x, ld
	}
	nan := T(math.NaN())
	a, lda = fill(rowsA, colsA, c.padA, nan)
	b, ldb = fill(rowsB, colsB, c.padB, nan)
	cm, ldc = fill(c.m, c.n, c.padC, ownSentinel)
	if c.nanC {
		for i := range c.m {
			for j := range c.n {
				cm[i*ldc+j] = nan
			}
		}
	}
	return a, lda, b, ldb, cm, ldc
}

const ownSentinel = 12345

// ownReference computes alpha·op(A)·op(B) + beta·C in float64 by the
// definition, and the error bound of a float computation of it: summing k
// products, scaling by alpha, adding beta·C and the blocking's extra
// additions of partial sums each round at most once per term, so
//
//	|computed − exact| ≤ γ · (|alpha|·Σ|a||b| + |beta·c|),  γ = (k+4+k/64)·u/(1−(k+4+k/64)·u)
//
// with u the unit roundoff of T (Higham, Accuracy and Stability, §3.5; the
// k/64 covers the blocks of at least 64 steps the product is split into).
func ownReference[T ownFloat](c ownCase, a []T, lda int, b []T, ldb int, cm []T, ldc int) (want, bound []float64) {
	want = make([]float64, c.m*c.n)
	bound = make([]float64, c.m*c.n)
	var zero T
	u := 0x1p-53
	if unsafe.Sizeof(zero) == 4 {
		u = 0x1p-24
	}
	alpha, beta := float64(T(c.alpha)), float64(T(c.beta)) // as the product sees them
	steps := float64(c.k + 4 + c.k/64)
	gamma := steps * u / (1 - steps*u)
	for i := range c.m {
		for j := range c.n {
			var sum, abs float64
			if alpha != 0 {
				for p := range c.k {
					ia, ib := i*lda+p, p*ldb+j
					if c.tA {
						ia = p*lda + i
					}
					if c.tB {
						ib = j*ldb + p
					}
					x, y := a[ia], b[ib]
					sum += float64(x) * float64(y)
					abs += math.Abs(float64(x) * float64(y))
				}
			}
			w := alpha * sum
			e := math.Abs(alpha) * abs
			if beta != 0 {
				w += beta * float64(cm[i*ldc+j])
				e += math.Abs(beta * float64(cm[i*ldc+j]))
			}
			want[i*c.n+j] = w
			// The float64 reference itself is off by up to γ₆₄·e; for
			// float64 that is as large as the bound, so it counts twice.
			bound[i*c.n+j] = gamma*e + (steps*0x1p-53)*e
		}
	}
	return want, bound
}

// ownRun calls the package function for T.
func ownRun[T ownFloat](c ownCase, a []T, lda int, b []T, ldb int, cm []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		Sgemm(c.tA, c.tB, c.m, c.n, c.k, float32(c.alpha), a, lda, any(b).([]float32), ldb, float32(c.beta), any(cm).([]float32), ldc)
	case []float64:
		Dgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, lda, any(b).([]float64), ldb, c.beta, any(cm).([]float64), ldc)
	}
}

// ownGonum calls gonum's Sgemm/Dgemm for T.
func ownGonum[T ownFloat](c ownCase, a []T, lda int, b []T, ldb int, cm []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if c.tA {
		ta = blas.Trans
	}
	if c.tB {
		tb = blas.Trans
	}
	var impl gonum.Implementation
	switch a := any(a).(type) {
	case []float32:
		impl.Sgemm(ta, tb, c.m, c.n, c.k, float32(c.alpha), a, lda, any(b).([]float32), ldb, float32(c.beta), any(cm).([]float32), ldc)
	case []float64:
		impl.Dgemm(ta, tb, c.m, c.n, c.k, c.alpha, a, lda, any(b).([]float64), ldb, c.beta, any(cm).([]float64), ldc)
	}
}

// ownForEachPath runs f once per kernel path this CPU supports.
func ownForEachPath(t *testing.T, f func(t *testing.T)) {
	prev := ownActive.Load()
	t.Cleanup(func() { ownActive.Store(prev) })
	for _, p := range ownPaths {
		t.Run(p.name, func(t *testing.T) {
			if !p.ok() {
				t.Skipf("%s: not supported by this CPU", p.name)
			}
			if err := ownUseKernel(p.name); err != nil {
				t.Fatal(err)
			}
			f(t)
		})
	}
}

func TestOwnGemmMatchesReference(t *testing.T) {
	ownForEachPath(t, func(t *testing.T) {
		random := 60
		if ownRaceEnabled || testing.Short() {
			random = 10 // the instrumented reference is slow; the race test is about the workers
		}
		t.Run("float32", func(t *testing.T) { ownCheckCases[float32](t, ownCases(1, random)) })
		t.Run("float64", func(t *testing.T) { ownCheckCases[float64](t, ownCases(2, random)) })
	})
}

func ownCheckCases[T ownFloat](t *testing.T, cases []ownCase) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		a, lda, b, ldb, cm, ldc := ownOperands[T](c, r)
		want, bound := ownReference(c, a, lda, b, ldb, cm, ldc)
		viaGonum := append([]T(nil), cm...)
		ownRun(c, a, lda, b, ldb, cm, ldc)
		if !c.nanC {
			ownGonum(c, a, lda, b, ldb, viaGonum, ldc)
		}
		bad := 0
		for i := range c.m {
			for j := range ldc {
				got := cm[i*ldc+j]
				if j >= c.n {
					if got != ownSentinel {
						t.Fatalf("%v: padding C[%d][%d] = %v, want it untouched (%v)", c, i, j, got, ownSentinel)
					}
					continue
				}
				w, e := want[i*c.n+j], bound[i*c.n+j]
				if d := math.Abs(float64(got) - w); !(d <= e) {
					t.Errorf("%v: C[%d][%d] = %v, want %v ± %.3g (off by %.3g)", c, i, j, got, w, e, d)
					bad++
				}
				if !c.nanC {
					g := viaGonum[i*ldc+j]
					if d := math.Abs(float64(got) - float64(g)); !(d <= 2*e) {
						t.Errorf("%v: C[%d][%d] = %v, gonum gives %v (differ by %.3g > %.3g)", c, i, j, got, g, d, 2*e)
						bad++
					}
				}
				if bad > 5 {
					t.FailNow()
				}
			}
		}
	}
}

// TestOwnSmallPathMatchesReference checks the products of ownCases with
// the small-matrix path off (every operand packed) against the reference;
// TestOwnGemmMatchesReference covers them with it on.
func TestOwnSmallPathMatchesReference(t *testing.T) {
	prev := ownSmallMax
	t.Cleanup(func() { ownSmallMax = prev })
	ownSmallMax = 0
	ownForEachPath(t, func(t *testing.T) {
		random := 30
		if ownRaceEnabled || testing.Short() {
			random = 5
		}
		t.Run("float32", func(t *testing.T) { ownCheckCases[float32](t, ownCases(3, random)) })
		t.Run("float64", func(t *testing.T) { ownCheckCases[float64](t, ownCases(4, random)) })
	})
}

// TestOwnSmallPathBitIdentical checks that reading A and B in place gives
// the same bits as packing them: the same products are summed in the same
// order, so a model trains identically either way. The shapes are the
// MNIST MLP's, with edge panels (rows not a multiple of mr, a narrow last
// B panel), padded strides, and the transposed route.
func TestOwnSmallPathBitIdentical(t *testing.T) {
	prev := ownSmallMax
	t.Cleanup(func() { ownSmallMax = prev })
	cases := []ownCase{
		{m: 128, n: 128, k: 784, tB: true, alpha: 1, beta: 1},
		{m: 128, n: 784, k: 128, tA: true, alpha: 1},
		{m: 128, n: 128, k: 128, alpha: 1, beta: 0.5, padA: 3, padB: 1, padC: 2},
		{m: 131, n: 70, k: 300, tA: true, tB: true, alpha: -0.5, padA: 1},
		{m: 128, n: 10, k: 128, tA: true, alpha: 1, beta: 1},
		{m: 25, n: 1000, k: 600, alpha: 2, beta: 0, nanC: true},
	}
	ownForEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			if !ownSmall(c.m, c.n, c.k) {
				t.Fatalf("%v: not on the small-matrix path (ownSmallMax %d)", c, prev)
			}
			t.Run("float32", func(t *testing.T) { ownCheckBitIdentical[float32](t, c, prev) })
			t.Run("float64", func(t *testing.T) { ownCheckBitIdentical[float64](t, c, prev) })
		}
	})
}

func ownCheckBitIdentical[T ownFloat](t *testing.T, c ownCase, smallMax int) {
	r := rand.New(rand.NewPCG(9, 10))
	a, lda, b, ldb, packed, ldc := ownOperands[T](c, r)
	small := append([]T(nil), packed...)
	ownSmallMax = 0
	ownRun(c, a, lda, b, ldb, packed, ldc)
	ownSmallMax = smallMax
	ownRun(c, a, lda, b, ldb, small, ldc)
	for i := range packed {
		if math.Float64bits(float64(packed[i])) != math.Float64bits(float64(small[i])) {
			t.Fatalf("%v: C[%d][%d] = %v on the small-matrix path, %v packed", c, i/ldc, i%ldc, small[i], packed[i])
		}
	}
}

// TestOwnGemmSplitOverThreads checks products split in more parts than
// the machine has cores, and in uneven parts, against the reference.
// TestOwnTransposeWins checks that the narrow cases above take the
// transposed route on the kernels with wide tiles, and square ones do not.
func TestOwnTransposeWins(t *testing.T) {
	for _, p := range ownPaths {
		if p.s.nr >= 16 && !ownTransposeWins(&p.s, 128, 10) {
			t.Errorf("%s float32: 128×10 not transposed", p.name)
		}
		if ownTransposeWins(&p.s, 128, 128) || ownTransposeWins(&p.d, 10, 128) {
			t.Errorf("%s: a square or wide C transposed", p.name)
		}
	}
}

func TestOwnGemmSplitOverThreads(t *testing.T) {
	prev := ownThreadCount()
	t.Cleanup(func() { _ = Own{}.SetThreads(prev) })
	threadCounts := []int{1, 2, 3, 5}
	if ownRaceEnabled || testing.Short() {
		threadCounts = []int{3}
	}
	for _, threads := range threadCounts {
		if err := (Own{}).SetThreads(threads); err != nil {
			t.Fatal(err)
		}
		cases := []ownCase{
			{m: 131, n: 97, k: 150, alpha: 1, beta: 0.5},
			{m: 40, n: 700, k: 70, alpha: 2, tA: true, tB: true, padC: 2},
			{m: 300, n: 20, k: 200, alpha: 1, tB: true, nanC: true},
			{m: 600, n: 10, k: 200, alpha: 1, beta: 1, tA: true, padC: 1},  // transposed, then split
			{m: 128, n: 128, k: 784, alpha: 1, beta: 1, tB: true, padA: 1}, // the MLP forward: split by columns
		}
		t.Run(fmt.Sprint(threads, "threads"), func(t *testing.T) {
			ownForEachPath(t, func(t *testing.T) {
				// Split these small products as if they were large (each
				// has at least 1.2M multiply-adds).
				ks, kd := ownKernelOf[float32](), ownKernelOf[float64]()
				savedS, savedD := ks.minWorkPerPart, kd.minWorkPerPart
				ks.minWorkPerPart, kd.minWorkPerPart = 1<<12, 1<<12
				defer func() { ks.minWorkPerPart, kd.minWorkPerPart = savedS, savedD }()
				ownCheckCases[float32](t, cases)
				ownCheckCases[float64](t, cases)
			})
		})
	}
}

// TestOwnGemmConcurrentCalls runs products from several goroutines at
// once; they share the workers and the pools.
func TestOwnGemmConcurrentCalls(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			c := ownCase{m: 100 + g, n: 120, k: 90, alpha: 1, beta: 1}
			ownCheckCases[float32](t, []ownCase{c, c})
			ownCheckCases[float64](t, []ownCase{c})
		})
	}
	wg.Wait()
}

// TestOwnGemmAlphaZeroSkipsAB checks that with alpha == 0 A and B are not
// read: NaNs in them must not reach C, which becomes beta·C.
func TestOwnGemmAlphaZeroSkipsAB(t *testing.T) {
	nan := float32(math.NaN())
	a := []float32{nan, nan, nan, nan}
	b := []float32{nan, nan, nan, nan}
	c := []float32{1, 2, 3, 4}
	Sgemm(false, false, 2, 2, 2, 0, a, 2, b, 2, 3, c, 2)
	for i, want := range []float32{3, 6, 9, 12} {
		if c[i] != want {
			t.Errorf("c[%d] = %v, want %v", i, c[i], want)
		}
	}
}

// TestOwnGemmBadArguments checks that invalid arguments are reported by
// CheckDgemm and Dgemm and leave C untouched instead of panicking.
func TestOwnGemmBadArguments(t *testing.T) {
	a := make([]float64, 12) // 3×4
	b := make([]float64, 20) // 4×5
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 1
	}
	shared := make([]float64, 40)
	cases := []struct {
		name    string
		tA, tB  bool
		m, n, k int
		a       []float64
		lda     int
		b       []float64
		ldb     int
		c       []float64
		ldc     int
		wantErr string
	}{
		{"negative m", false, false, -1, 5, 4, a, 4, b, 5, make([]float64, 15), 5, "want all ≥ 0"},
		{"negative k", false, false, 3, 5, -4, a, 4, b, 5, make([]float64, 15), 5, "want all ≥ 0"},
		{"lda below width", false, false, 3, 5, 4, a, 3, b, 5, make([]float64, 15), 5, "lda = 3 for a 3×4 matrix, want ≥ 4"},
		{"lda below width of Aᵀ", true, false, 3, 5, 4, a, 2, b, 5, make([]float64, 15), 5, "lda = 2 for a 4×3 matrix, want ≥ 3"},
		{"ldb below width", false, false, 3, 5, 4, a, 4, b, 4, make([]float64, 15), 5, "ldb = 4 for a 4×5 matrix, want ≥ 5"},
		{"ldc below width", false, false, 3, 5, 4, a, 4, b, 5, make([]float64, 15), 4, "ldc = 4 for a 3×5 matrix, want ≥ 5"},
		{"short a", false, false, 3, 5, 4, a[:11], 4, b, 5, make([]float64, 15), 5, "len(a) = 11, want ≥ 12"},
		{"short b", false, true, 3, 5, 4, a, 4, b[:19], 4, make([]float64, 15), 5, "len(b) = 19, want ≥ 20"},
		{"short c", false, false, 3, 5, 4, a, 4, b, 5, make([]float64, 14), 5, "len(c) = 14, want ≥ 15"},
		{"huge stride", false, false, 3, 5, 4, a, math.MaxInt / 2, b, 5, make([]float64, 15), 5, "does not fit in memory"},
		{"c overlaps a", false, false, 3, 5, 4, shared[:12], 4, b, 5, shared[10:25], 5, "c overlaps a"},
		{"c overlaps b", false, false, 3, 5, 4, a, 4, shared[:20], 5, shared[19:34], 5, "c overlaps b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.c {
				tc.c[i] = 7
			}
			err := CheckDgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckDgemm: %v, want an error containing %q", err, tc.wantErr)
			}
			before := append([]float64(nil), tc.c...)
			if derr := Dgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, tc.a, tc.lda, tc.b, tc.ldb, 0, tc.c, tc.ldc); derr == nil || derr.Error() != err.Error() {
				t.Errorf("Dgemm returned %v, want CheckDgemm's error %v", derr, err)
			}
			for i := range tc.c {
				if tc.c[i] != before[i] && !(math.IsNaN(tc.c[i]) && math.IsNaN(before[i])) {
					t.Fatalf("Dgemm wrote c[%d] = %v (was %v) despite invalid arguments", i, tc.c[i], before[i])
				}
			}
		})
	}
	// Adjacent but not overlapping is fine.
	if err := CheckDgemm(false, false, 3, 5, 4, shared[:12], 4, b, 5, shared[12:27], 5); err != nil {
		t.Errorf("adjacent a and c: %v", err)
	}
	// A bad transpose flag through the BLAS-style method is a no-op too.
	c := []float32{7}
	Own{}.Sgemm(blas.Transpose('x'), blas.NoTrans, 1, 1, 1, 1, []float32{2}, 1, []float32{3}, 1, 0, c, 1)
	if c[0] != 7 {
		t.Errorf("Own.Sgemm with an invalid transpose flag wrote %v", c[0])
	}
	Own{}.Sgemm(blas.ConjTrans, blas.NoTrans, 1, 1, 1, 1, []float32{2}, 1, []float32{3}, 1, 0, c, 1)
	if c[0] != 6 {
		t.Errorf("Own.Sgemm(ConjTrans) 2·3 = %v, want 6", c[0])
	}
	if err := (Own{}).SetThreads(0); err == nil {
		t.Error("SetThreads(0) accepted")
	}
}

func TestOwnKernelSelection(t *testing.T) {
	prev, prevNote := ownActive.Load(), ownNote.Load()
	t.Cleanup(func() { ownActive.Store(prev); ownNote.Store(prevNote) })
	for _, p := range ownPaths {
		t.Setenv(ownKernelEnv, strings.ToUpper(p.name))
		ownSelectFromEnv()
		if !p.ok() {
			if ownActive.Load() == p || !strings.Contains(Own{}.Name(), "not supported") {
				t.Errorf("%s=%s on a CPU without it: %s", ownKernelEnv, p.name, Own{}.Name())
			}
			continue
		}
		if got := ownActive.Load(); got != p {
			t.Errorf("%s=%s selected %s", ownKernelEnv, p.name, got.name)
		}
		if name := (Own{}).Name(); !strings.Contains(name, p.label) || strings.Contains(name, ";") {
			t.Errorf("%s=%s: Name() = %q, want it to mention %q and no note", ownKernelEnv, p.name, name, p.label)
		}
	}
	t.Setenv(ownKernelEnv, "sse9")
	ownSelectFromEnv()
	if got := ownActive.Load(); got != ownBestPath() {
		t.Errorf("unknown kernel name: selected %s, want the best path %s", got.name, ownBestPath().name)
	}
	if name := (Own{}).Name(); !strings.Contains(name, "sse9 unknown") {
		t.Errorf("Name() = %q, want it to say sse9 is unknown", name)
	}
}

// TestOwnGemmAllocations checks that a warm product, single-threaded or
// split over threads, allocates nothing.
func TestOwnGemmAllocations(t *testing.T) {
	if ownRaceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	for _, s := range [][3]int{{8, 8, 8}, {256, 256, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		ad, bd, cd := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
		run := func() {
			Sgemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n)
			Dgemm(true, false, m, n, k, 1, ad, m, bd, n, 1, cd, n)
		}
		run()
		if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
			t.Errorf("%d×%d×%d: %v allocations per call, want 0", m, n, k, allocs)
		}
	}
}

// TestOwnMatchesGonumSignatures checks that Own's methods have the exact
// types of gonum's blas.Float32Level3.Sgemm and blas.Float64Level3.Dgemm,
// so that a BLAS type can take them over.
func TestOwnMatchesGonumSignatures(t *testing.T) {
	for _, c := range []struct {
		iface  reflect.Type
		method string
	}{
		{reflect.TypeFor[blas.Float32Level3](), "Sgemm"},
		{reflect.TypeFor[blas.Float64Level3](), "Dgemm"},
	} {
		want, ok := c.iface.MethodByName(c.method)
		if !ok {
			t.Fatalf("%v has no %s", c.iface, c.method)
		}
		got := reflect.ValueOf(Own{}).MethodByName(c.method)
		if !got.IsValid() {
			t.Fatalf("Own has no %s", c.method)
		}
		if got.Type() != want.Type {
			t.Errorf("Own.%s is %v, gonum's is %v", c.method, got.Type(), want.Type)
		}
	}
}

// TestOwnSplitChoices pins how products are split over 2 threads: the
// MNIST MLP's products stay on the caller's goroutine (BenchmarkOwnThreshold:
// splitting them lost), the FFN's are split, and a small product whose B is
// packed is split by columns, so that no part packs all of B.
func TestOwnSplitChoices(t *testing.T) {
	prev := ownThreadCount()
	t.Cleanup(func() { _ = Own{}.SetThreads(prev) })
	_ = Own{}.SetThreads(2)
	ownForEachPath(t, func(t *testing.T) {
		kern := ownKernelOf[float32]()
		if kern.microA == nil {
			t.Skip("no small-matrix path")
		}
		for _, s := range [][3]int{{128, 128, 784}, {128, 784, 128}, {128, 128, 128}} {
			if _, parts := ownSplit(kern, s[0], s[1], s[2], true); parts != 1 {
				t.Errorf("%d×%d×%d split in %d parts, want 1", s[0], s[1], s[2], parts)
			}
		}
		if _, parts := ownSplit(kern, 512, 1024, 256, true); parts != 2 {
			t.Errorf("512×1024×256 split in %d parts, want 2", parts)
		}
		if byRows, _ := ownSplit(kern, 1000, 200, 100, true); byRows {
			t.Errorf("1000×200×100 with B transposed split by rows, want columns")
		}
		if byRows, _ := ownSplit(kern, 1000, 200, 100, false); !byRows {
			t.Errorf("1000×200×100 with B in place split by columns, want rows (the longer side)")
		}
	})
}

// TestOwnPackTranspose checks the transposed packing, whose AVX-512 path
// moves 16×16 blocks in registers, against the definition
// dst[p·w + j] = src[j·lds + p], for sizes around the block edges.
func TestOwnPackTranspose(t *testing.T) {
	ownForEachPath(t, func(t *testing.T) {
		kern := ownKernelOf[float32]()
		for _, rows := range []int{1, 15, 16, 17, 31, 32, 33, 48} {
			for _, kc := range []int{1, 15, 16, 17, 40, 64} {
				for _, w := range []int{max(rows, 16), rows + 3} {
					lds := kc + 5
					src := make([]float32, (rows-1)*lds+kc)
					for i := range src {
						src[i] = float32(i)
					}
					dst := make([]float32, (kc-1)*w+rows)
					ownPackT(kern, dst, w, src, lds, rows, kc)
					for p := range kc {
						for j := range rows {
							if got, want := dst[p*w+j], float32(j*lds+p); got != want {
								t.Fatalf("rows %d, kc %d, w %d: dst[%d·w+%d] = %v, want %v", rows, kc, w, p, j, got, want)
							}
						}
					}
				}
			}
		}
	})
}

// OwnThreadsFor: a 128×128×128 product (2²¹ multiply-adds) is below the
// assembly paths' threshold of 2²³ per part but 16 parts' worth of the
// portable kernel's 2¹⁷; 8×8×8 is one part everywhere; 1024×1024×256
// (2²⁸) is split over every thread allowed, and never over more.
func TestOwnThreadsFor(t *testing.T) {
	ownForEachPath(t, func(t *testing.T) {
		small := map[string]int{"avx512": 1, "avx2": 1, "generic": 2}[ownActive.Load().name]
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			for _, c := range []struct {
				threads, m, n, k int
				tB               bool
				want             int
			}{
				{2, 128, 128, 128, false, small},
				{2, 128, 128, 128, true, small},
				{2, 8, 8, 8, false, 1},
				{2, 1024, 1024, 256, true, 2},
				{1, 1024, 1024, 256, false, 1},
				{3, 1024, 1024, 256, false, 3},
			} {
				if got := OwnThreadsFor(c.threads, c.tB, c.m, c.n, c.k, dt); got != c.want {
					t.Errorf("%v %d×%d×%d tB=%v on %d threads: %d, want %d", dt, c.m, c.n, c.k, c.tB, c.threads, got, c.want)
				}
			}
		}
	})
}

// A product finds its packing buffers again after garbage collections (a
// sync.Pool would have been emptied by two): no allocation, split over
// threads or not.
func TestOwnGemmAllocatesNothingAcrossGC(t *testing.T) {
	if ownRaceEnabled {
		t.Skip("the race detector allocates")
	}
	prev := ownThreads.Load()
	defer ownThreads.Store(prev)
	ownThreads.Store(2)
	for _, size := range []int{64, 512} { // one part, then two (2²⁷ multiply-adds)
		a, b, c := make([]float32, size*size), make([]float32, size*size), make([]float32, size*size)
		Sgemm(false, false, size, size, size, 1, a, size, b, size, 0, c, size) // the first makes the buffers
		if n := testing.AllocsPerRun(3, func() {
			runtime.GC()
			runtime.GC()
			Sgemm(false, false, size, size, size, 1, a, size, b, size, 0, c, size)
		}); n != 0 {
			t.Errorf("%d³ after two GCs: %v allocations per product, want 0", size, n)
		}
	}
}
