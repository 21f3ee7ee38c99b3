package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// bf16AMXEmulatedPath runs the AMX path's blocking and packing (32×32
// tiles, row-major A panels, pairs padded to 16) with a Go micro-kernel
// that does what Intel defines TDPBF16PS to do, so that everything but
// the tile instructions is tested on any machine.
var bf16AMXEmulatedPath = bf16Kernel{
	name: "amx-emulated", label: "AMX-BF16 emulated in Go", micro: bf16MicroAMXEmulated,
	mr: 32, nr: 32, mc: 128, nc: 512, kAlign: 16, aRowMajor: true, packAsm: true,
	scratch: 32 * 32, minWorkPerPart: 1 << 16,
	usable: func() (bool, string) { return true, "" },
}

// bf16MicroAMXEmulated is bf16KernAMX in Go: per Intel's definition of
// TDPBF16PS each lane adds its even product, then its odd one (the
// reverse of VDPBF16PS), each rounded, with denormals flushed.
func bf16MicroAMXEmulated(kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, alpha, beta float32, _ []float32) {
	const mr, nr = 32, 32
	if kp%16 != 0 {
		panic(fmt.Sprintf("AMX micro-kernel with %d pairs, want a multiple of 16", kp))
	}
	ap := unsafe.Slice(a, (mr-1)*lda+kp)
	bp := unsafe.Slice(b, kp*nr)
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	swap := func(x uint32) uint32 { return x<<16 | x>>16 }
	for i := range mr {
		for j := range nr {
			var acc float32
			for p := range kp {
				acc = bf16Dot2(acc, swap(ap[i*lda+p]), swap(bp[p*nr+j]))
			}
			t := float32(alpha * acc)
			if beta == 0 {
				cs[i*ldc+j] = t
			} else {
				cs[i*ldc+j] = t + float32(beta*cs[i*ldc+j])
			}
		}
	}
}

// bf16ForEachPath runs f on every bf16 path this machine runs, and on
// the emulated AMX path.
func bf16ForEachPath(t *testing.T, f func(t *testing.T)) {
	prev := bf16Path()
	t.Cleanup(func() { bf16Active.Store(prev) })
	for _, p := range append(append([]*bf16Kernel(nil), bf16Paths...), &bf16AMXEmulatedPath) {
		t.Run(p.name, func(t *testing.T) {
			if ok, why := p.usable(); !ok {
				t.Skipf("%s: %s", p.name, why)
			}
			bf16Active.Store(p)
			f(t)
		})
	}
}

// bf16Quick: fewer cases for the portable kernels under the race
// detector or -short.
func bf16Quick() bool { return ownRaceEnabled || testing.Short() }

// bf16AVX512Usable reports whether this build and CPU run the
// AVX512_BF16 path, and if not why.
func bf16AVX512Usable() (bool, string) {
	for _, p := range bf16Paths {
		if p.name == "avx512bf16" {
			return p.usable()
		}
	}
	return false, "no AVX512_BF16 path in this build"
}

// bf16Rounded is the bfloat16 value the kernels multiply for x, as a
// float32.
func bf16Rounded(x float32) float32 { return ToBF16(x).Float32() }

// bf16Kind says which element types a test passes for A and B.
type bf16Kind int

const (
	bf16F32F32 bf16Kind = iota
	bf16B16B16
	bf16F32B16
)

func (k bf16Kind) String() string { return [...]string{"f32·f32", "bf16·bf16", "f32·bf16"}[k] }

func bf16ToSlice(x []float32) []BF16 {
	y := make([]BF16, len(x))
	bf16ToBF16sGo(y, x)
	return y
}

// bf16Run calls GemmBF16 with A and B in the element types of kind.
func bf16Run(kind bf16Kind, c ownCase, a []float32, lda int, b []float32, ldb int, cm []float32, ldc int) error {
	alpha, beta := float32(c.alpha), float32(c.beta)
	switch kind {
	case bf16B16B16:
		return GemmBF16(c.tA, c.tB, c.m, c.n, c.k, alpha, bf16ToSlice(a), lda, bf16ToSlice(b), ldb, beta, cm, ldc)
	case bf16F32B16:
		return GemmBF16(c.tA, c.tB, c.m, c.n, c.k, alpha, a, lda, bf16ToSlice(b), ldb, beta, cm, ldc)
	}
	return GemmBF16(c.tA, c.tB, c.m, c.n, c.k, alpha, a, lda, b, ldb, beta, cm, ldc)
}

// bf16Reference is the float64 product of the bfloat16-rounded operands
// (ownReference of them: each product of two bfloat16 is exact in float64)
// and the bound of a float32 evaluation of it in any order. A lane adds
// one product at a time, each addition rounded once, and the partial sum
// of each block of bf16KC steps is added to C: at most k + k/bf16KC + 3
// roundings per term, inside ownReference's γ with k + 4 + k/64 steps and
// u = 2⁻²⁴ (Higham §3.5). A flush to zero moves a partial sum by less than
// 2⁻¹²⁶ each time: at most 2k·2⁻¹²⁶ more.
func bf16Reference(c ownCase, a []float32, lda int, b []float32, ldb int, cm []float32, ldc int) (want, bound []float64) {
	ar, br := make([]float32, len(a)), make([]float32, len(b))
	for i, x := range a {
		ar[i] = bf16Rounded(x)
	}
	for i, x := range b {
		br[i] = bf16Rounded(x)
	}
	want, bound = ownReference(c, ar, lda, br, ldb, cm, ldc)
	for i := range bound {
		bound[i] += math.Abs(c.alpha) * float64(2*c.k) * 0x1p-126
	}
	return want, bound
}

// bf16CheckCases runs the cases on the path in use and checks C against
// bf16Reference, C's padding untouched.
func bf16CheckCases(t *testing.T, kind bf16Kind, cases []ownCase) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range cases {
		a, lda, b, ldb, cm, ldc := ownOperands[float32](c, r)
		want, bound := bf16Reference(c, a, lda, b, ldb, cm, ldc)
		if err := bf16Run(kind, c, a, lda, b, ldb, cm, ldc); err != nil {
			t.Fatalf("%v %v: %v", kind, c, err)
		}
		bad := 0
		for i := range c.m {
			for j := range ldc {
				got := cm[i*ldc+j]
				if j >= c.n {
					if got != ownSentinel {
						t.Fatalf("%v %v: padding C[%d][%d] = %v, want it untouched (%v)", kind, c, i, j, got, ownSentinel)
					}
					continue
				}
				w, e := want[i*c.n+j], bound[i*c.n+j]
				if d := math.Abs(float64(got) - w); !(d <= e) {
					t.Errorf("%v %v: C[%d][%d] = %v, want %v ± %.3g (off by %.3g)", kind, c, i, j, got, w, e, d)
					if bad++; bad > 5 {
						t.FailNow()
					}
				}
			}
		}
	}
}

// TestGemmBF16MatchesReference checks every path on the own GEMM's cases
// (tile and block edges, transposes, strides with NaN padding, the BLAS
// scalars, C full of NaN with beta 0) and on products deeper than bf16KC,
// for each pairing of element types.
func TestGemmBF16MatchesReference(t *testing.T) {
	bf16ForEachPath(t, func(t *testing.T) {
		fast := bf16Path().name == "avx512bf16"
		random, kinds := 40, 3
		if !fast {
			random = 8 // the portable kernels are slow
		}
		deep := []ownCase{
			{m: 13, n: 35, k: 1100, alpha: 1, beta: 0.5},
			{m: 40, n: 33, k: 1025, alpha: -1, tA: true, tB: true, padA: 1, padB: 2, padC: 3},
		}
		if bf16Quick() && !fast {
			// The instrumented portable kernels: the bfloat16 operands'
			// packing is the same code on every path.
			random, kinds, deep = 4, 1, deep[1:]
		}
		for kind := range kinds {
			t.Run(bf16Kind(kind).String(), func(t *testing.T) {
				bf16CheckCases(t, bf16Kind(kind), append(ownCases(uint64(20+kind), random), deep...))
			})
		}
	})
}

// TestBF16ReferenceDetectsFloat32Products checks that the bound of
// bf16Reference is tight enough to tell a bfloat16 product from a float32
// one: the own float32 GEMM's result falls outside it for most elements.
func TestBF16ReferenceDetectsFloat32Products(t *testing.T) {
	c := ownCase{m: 20, n: 30, k: 64, alpha: 1}
	r := rand.New(rand.NewPCG(1, 1))
	a, lda, b, ldb, cm, ldc := ownOperands[float32](c, r)
	want, bound := bf16Reference(c, a, lda, b, ldb, cm, ldc)
	Sgemm(c.tA, c.tB, c.m, c.n, c.k, 1, a, lda, b, ldb, 0, cm, ldc)
	outside := 0
	for i := range c.m {
		for j := range c.n {
			if math.Abs(float64(cm[i*ldc+j])-want[i*c.n+j]) > bound[i*c.n+j] {
				outside++
			}
		}
	}
	if outside < c.m*c.n*9/10 {
		t.Errorf("float32 products outside the bf16 bound in %d of %d elements, want at least 90%%", outside, c.m*c.n)
	}
}

// TestGemmBF16Exact: with small integers every product and partial sum is
// exact in float32 (|C| < 2²⁴), so every path must give the float64
// result exactly, whatever the order of its sums.
func TestGemmBF16Exact(t *testing.T) {
	bf16ForEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 5))
		for _, c := range []ownCase{{m: 37, n: 70, k: 1030, tB: true}, {m: 5, n: 3, k: 7, tA: true}, {m: 64, n: 64, k: 64}} {
			rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
			a, b := make([]float32, rowsA*colsA), make([]float32, rowsB*colsB)
			for i := range a {
				a[i] = float32(r.IntN(15) - 7)
			}
			for i := range b {
				b[i] = float32(r.IntN(15) - 7)
			}
			cm := make([]float32, c.m*c.n)
			for i := range cm {
				cm[i] = float32(r.IntN(100))
			}
			want := make([]float64, len(cm))
			for i := range c.m {
				for j := range c.n {
					s := 3 * float64(cm[i*c.n+j])
					for p := range c.k {
						x, y := a[i*c.k+p], b[p*c.n+j]
						if c.tA {
							x = a[p*c.m+i]
						}
						if c.tB {
							y = b[j*c.k+p]
						}
						s += 2 * float64(x) * float64(y)
					}
					want[i*c.n+j] = s
				}
			}
			if err := GemmBF16(c.tA, c.tB, c.m, c.n, c.k, 2, a, colsA, b, colsB, 3, cm, c.n); err != nil {
				t.Fatal(err)
			}
			for i := range cm {
				if float64(cm[i]) != want[i] {
					t.Fatalf("%v: C[%d][%d] = %v, want %v exactly", c, i/c.n, i%c.n, cm[i], want[i])
				}
			}
		}
	})
}

// bf16WideOperands fills A and B with values of random sign and random
// binary exponent in [lo, hi), so that products and partial sums cross
// many rounding boundaries (and, for low exponents, the flush to zero).
func bf16WideOperands(c ownCase, r *rand.Rand, lo, hi int) (a, b, cm []float32) {
	rowsA, colsA, rowsB, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(1+r.Float64(), lo+r.IntN(hi-lo)))
			if r.IntN(2) == 0 {
				x[i] = -x[i]
			}
		}
		return x
	}
	return fill(rowsA * colsA), fill(rowsB * colsB), fill(c.m * c.n)
}

// TestGemmBF16PathsBitIdentical checks that the AVX512_BF16 kernels and
// the portable one give the same bits, on products whose operands span
// wide ranges of magnitude, including products below 2⁻¹²⁶ that the
// instruction flushes, at every tile edge and transpose.
func TestGemmBF16PathsBitIdentical(t *testing.T) {
	if ok, why := bf16AVX512Usable(); !ok {
		t.Skip(why)
	}
	prev := bf16Path()
	t.Cleanup(func() { bf16Active.Store(prev) })
	r := rand.New(rand.NewPCG(3, 3))
	cases := ownCases(30, 12)
	cases = append(cases, ownCase{m: 30, n: 70, k: 1100, alpha: 1, beta: 1}, ownCase{m: 13, n: 40, k: 600, tA: true, tB: true, alpha: -0.5, beta: 2})
	ranges := [][2]int{{-20, 20}, {-70, -60}, {-64, -62}, {50, 64}}
	if bf16Quick() {
		cases, ranges = append(ownCases(30, 2)[:8], cases[len(cases)-1]), ranges[:2]
	}
	for _, rng := range ranges {
		for _, c := range cases {
			if c.m*c.n == 0 {
				continue
			}
			a, b, cm := bf16WideOperands(c, r, rng[0], rng[1])
			_, colsA, _, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
			colsA, colsB = max(1, colsA), max(1, colsB)
			got := map[string][]float32{}
			for _, name := range []string{"generic", "avx512bf16"} {
				if err := bf16UseKernel(name); err != nil {
					t.Fatal(err)
				}
				out := append([]float32(nil), cm...)
				if err := GemmBF16(c.tA, c.tB, c.m, c.n, c.k, float32(c.alpha), a, colsA, b, colsB, float32(c.beta), out, c.n); err != nil {
					t.Fatal(err)
				}
				got[name] = out
			}
			for i, x := range got["generic"] {
				y := got["avx512bf16"][i]
				if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
					t.Fatalf("exponents %v, %v: C[%d][%d] = %v (%#08x) portable, %v (%#08x) AVX512_BF16",
						rng, c, i/c.n, i%c.n, x, math.Float32bits(x), y, math.Float32bits(y))
				}
			}
		}
	}
}

// TestToBF16 checks ToBF16 against the definition: the nearer of the two
// bfloat16 neighbours of x (ties to the even one, 2¹²⁸ standing for the
// one past the largest, which rounds to infinity), subnormals to zeros of
// their sign, NaNs quiet with their sign and upper payload. Every upper
// half of a float32, with lower halves at and around the tie.
func TestToBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for hi := range uint32(1 << 16) {
		for _, lo := range []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, r.Uint32() & 0xffff} {
			u := hi<<16 | lo
			x := math.Float32frombits(u)
			var want BF16
			switch {
			case x != x:
				want = BF16(hi | 0x40)
			case u&0x7f800000 == 0:
				want = BF16(hi & 0x8000)
			case math.IsInf(float64(x), 0):
				want = BF16(hi)
			default:
				down := float64(math.Float32frombits(hi << 16))
				up := math.Copysign(math.Abs(down)+math.Ldexp(1, math.Ilogb(down)-7), down)
				dd, du := math.Abs(float64(x)-down), math.Abs(up-float64(x))
				want = BF16(hi)
				if du < dd || (du == dd && hi&1 == 1) {
					want = BF16(hi + 1) // the next bfloat16 up in magnitude, or ∞
				}
			}
			if got := ToBF16(x); got != want {
				t.Fatalf("ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
			}
		}
	}
}

// TestToBF16sMatchesGo checks the vector conversions against ToBF16 and
// BF16.Float32 at lengths around the vector widths, with every kind of
// float32 in them.
func TestToBF16sMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 1000, 4099} {
		src := make([]float32, n)
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32())
			if i%3 == 0 {
				src[i] = float32(r.NormFloat64())
			}
		}
		dst := make([]BF16, n)
		if err := ToBF16s(dst, src); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, n)
		if err := FromBF16s(back, dst); err != nil {
			t.Fatal(err)
		}
		for i := range src {
			if want := ToBF16(src[i]); dst[i] != want {
				t.Fatalf("n %d: ToBF16s[%d] of %#08x = %#04x, want %#04x", n, i, math.Float32bits(src[i]), dst[i], want)
			}
			if got, want := math.Float32bits(back[i]), uint32(dst[i])<<16; got != want {
				t.Fatalf("n %d: FromBF16s[%d] of %#04x = %#08x, want %#08x", n, i, dst[i], got, want)
			}
		}
	}
	if err := ToBF16s(make([]BF16, 3), make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "len(dst) = 3, len(src) = 4") {
		t.Errorf("ToBF16s with unequal lengths: %v", err)
	}
	if err := FromBF16s(make([]float32, 3), make([]BF16, 4)); err == nil || !strings.Contains(err.Error(), "want them equal") {
		t.Errorf("FromBF16s with unequal lengths: %v", err)
	}
}

// TestToBF16Exhaustive compares ToBF16 with VCVTNE2PS2BF16 on all 2³²
// float32 (about a minute; GELU_BF16_EXHAUSTIVE=1 runs it).
func TestToBF16Exhaustive(t *testing.T) {
	if os.Getenv("GELU_BF16_EXHAUSTIVE") == "" {
		t.Skip("GELU_BF16_EXHAUSTIVE=1 compares all 2³² float32")
	}
	if ok, why := bf16AVX512Usable(); !ok {
		t.Skip(why)
	}
	const block = 1 << 16
	src, dst := make([]float32, block), make([]BF16, block)
	for hi := range uint32(1 << 16) {
		for lo := range uint32(block) {
			src[lo] = math.Float32frombits(hi<<16 | lo)
		}
		bf16ToBF16s(dst, src)
		for lo, x := range src {
			if want := ToBF16(x); dst[lo] != want {
				t.Fatalf("VCVTNE2PS2BF16(%#08x) = %#04x, ToBF16 %#04x", math.Float32bits(x), dst[lo], want)
			}
		}
	}
}

// TestGemmBF16ThreadsBitIdentical checks that splitting a product over
// 1, 2, 3 or 5 threads, by rows or by columns, gives the same bits.
func TestGemmBF16ThreadsBitIdentical(t *testing.T) {
	prevThreads := ownThreadCount()
	t.Cleanup(func() { _ = Own{}.SetThreads(prevThreads) })
	bf16ForEachPath(t, func(t *testing.T) {
		kern := bf16Path()
		saved := kern.minWorkPerPart
		kern.minWorkPerPart = 1 << 10
		defer func() { kern.minWorkPerPart = saved }()
		r := rand.New(rand.NewPCG(2, 2))
		for _, c := range []ownCase{{m: 131, n: 97, k: 600, alpha: 1, beta: 0.5}, {m: 40, n: 300, k: 70, alpha: 2, tA: true, tB: true}, {m: 300, n: 10, k: 30, alpha: 1, tB: true}} {
			a, b, cm := bf16WideOperands(c, r, -10, 10)
			_, colsA, _, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
			var first []float32
			threadCounts := []int{1, 2, 3, 5}
			if bf16Quick() {
				threadCounts = []int{1, 3}
			}
			for _, threads := range threadCounts {
				_ = Own{}.SetThreads(threads)
				out := append([]float32(nil), cm...)
				if err := GemmBF16(c.tA, c.tB, c.m, c.n, c.k, float32(c.alpha), a, colsA, b, colsB, float32(c.beta), out, c.n); err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = out
					continue
				}
				for i := range out {
					if math.Float32bits(out[i]) != math.Float32bits(first[i]) {
						t.Fatalf("%v on %d threads: C[%d][%d] = %v, %v on one", c, threads, i/c.n, i%c.n, out[i], first[i])
					}
				}
			}
		}
	})
}

// TestGemmBF16BadArguments checks that invalid arguments are reported, in
// the own GEMM's words, and leave C untouched.
func TestGemmBF16BadArguments(t *testing.T) {
	a := make([]float32, 12) // 3×4
	b := make([]BF16, 20)    // 4×5
	shared := make([]float32, 40)
	sharedB := unsafe.Slice((*BF16)(unsafe.Pointer(&shared[0])), 80)
	cases := []struct {
		name    string
		tA, tB  bool
		m, n, k int
		a       []float32
		lda     int
		b       []BF16
		ldb     int
		c       []float32
		ldc     int
		wantErr string
	}{
		{"negative m", false, false, -1, 5, 4, a, 4, b, 5, make([]float32, 15), 5, "want all ≥ 0"},
		{"lda below width", false, false, 3, 5, 4, a, 3, b, 5, make([]float32, 15), 5, "lda = 3 for a 3×4 matrix, want ≥ 4"},
		{"lda below width of Aᵀ", true, false, 3, 5, 4, a, 2, b, 5, make([]float32, 15), 5, "lda = 2 for a 4×3 matrix, want ≥ 3"},
		{"ldb below width", false, false, 3, 5, 4, a, 4, b, 4, make([]float32, 15), 5, "ldb = 4 for a 4×5 matrix, want ≥ 5"},
		{"ldc below width", false, false, 3, 5, 4, a, 4, b, 5, make([]float32, 15), 4, "ldc = 4 for a 3×5 matrix, want ≥ 5"},
		{"short a", false, false, 3, 5, 4, a[:11], 4, b, 5, make([]float32, 15), 5, "len(a) = 11, want ≥ 12"},
		{"short b", false, true, 3, 5, 4, a, 4, b[:19], 4, make([]float32, 15), 5, "len(b) = 19, want ≥ 20"},
		{"short c", false, false, 3, 5, 4, a, 4, b, 5, make([]float32, 14), 5, "len(c) = 14, want ≥ 15"},
		{"huge stride", false, false, 3, 5, 4, a, math.MaxInt / 2, b, 5, make([]float32, 15), 5, "does not fit in memory"},
		{"c overlaps a", false, false, 3, 5, 4, shared[:12], 4, b, 5, shared[10:25], 5, "c overlaps a"},
		// b's 20 bfloat16 end in the middle of shared[9], where c starts.
		{"c overlaps b", false, false, 3, 5, 4, a, 4, sharedB[:20], 5, shared[9:24], 5, "c overlaps b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.c {
				tc.c[i] = 7
			}
			err := CheckGemmBF16(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckGemmBF16: %v, want an error containing %q", err, tc.wantErr)
			}
			before := append([]float32(nil), tc.c...)
			if err2 := GemmBF16(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, tc.a, tc.lda, tc.b, tc.ldb, 0, tc.c, tc.ldc); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("GemmBF16: %v, want CheckGemmBF16's error %v", err2, err)
			}
			for i := range tc.c {
				if math.Float32bits(tc.c[i]) != math.Float32bits(before[i]) {
					t.Fatalf("GemmBF16 wrote c[%d] = %v (was %v) despite invalid arguments", i, tc.c[i], before[i])
				}
			}
		})
	}
	// Adjacent but not overlapping is fine: b's 20 bfloat16 fill shared[0:10].
	if err := CheckGemmBF16(false, false, 3, 5, 4, a, 4, sharedB[:20], 5, shared[10:25], 5); err != nil {
		t.Errorf("adjacent b and c: %v", err)
	}
}

// TestGemmBF16AlphaZeroSkipsAB checks that with alpha == 0 A and B are
// not read: NaNs in them must not reach C, which becomes beta·C.
func TestGemmBF16AlphaZeroSkipsAB(t *testing.T) {
	nan := float32(math.NaN())
	c := []float32{1, 2, 3, 4}
	if err := GemmBF16(false, false, 2, 2, 2, 0, []float32{nan, nan, nan, nan}, 2, []BF16{0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0}, 2, 3, c, 2); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{3, 6, 9, 12} {
		if c[i] != want {
			t.Errorf("c[%d] = %v, want %v", i, c[i], want)
		}
	}
}

// TestGemmBF16Allocations checks that a warm product, on one thread or
// split, allocates nothing.
func TestGemmBF16Allocations(t *testing.T) {
	if ownRaceEnabled {
		t.Skip("the race detector makes the free lists allocate")
	}
	prev := ownThreadCount()
	t.Cleanup(func() { _ = Own{}.SetThreads(prev) })
	_ = Own{}.SetThreads(2)
	for _, s := range [][3]int{{8, 8, 8}, {256, 256, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]BF16, k*n), make([]float32, m*n)
		run := func() { _ = GemmBF16(false, true, m, n, k, 1, a, k, b, k, 1, c, n) }
		run()
		if allocs := testing.AllocsPerRun(10, run); allocs != 0 {
			t.Errorf("%d×%d×%d: %v allocations per call, want 0", m, n, k, allocs)
		}
	}
}

// TestBF16KernelSelection checks GELU_BF16_KERNEL: each path by name
// (a note where the machine cannot run it), and an unknown name.
func TestBF16KernelSelection(t *testing.T) {
	prev, prevNote := bf16Path(), bf16Note.Load()
	t.Cleanup(func() { bf16Active.Store(prev); bf16Note.Store(prevNote) })
	for _, p := range bf16Paths {
		t.Setenv(bf16KernelEnv, strings.ToUpper(p.name))
		bf16SelectFromEnv()
		name := BF16Name()
		if ok, why := p.usable(); !ok {
			if bf16Path() == p || !strings.Contains(name, "not usable here: "+why) {
				t.Errorf("%s=%s where it cannot run: %s", bf16KernelEnv, p.name, name)
			}
			continue
		}
		if bf16Path() != p || !strings.Contains(name, p.label) || strings.Contains(name, ";") {
			t.Errorf("%s=%s: path %s, BF16Name() = %q", bf16KernelEnv, p.name, bf16Path().name, name)
		}
	}
	t.Setenv(bf16KernelEnv, "sse9")
	bf16SelectFromEnv()
	if bf16Path() != bf16BestPath() || !strings.Contains(BF16Name(), "sse9 unknown; want amx, avx512bf16, generic") && !strings.Contains(BF16Name(), "sse9 unknown; want generic") {
		t.Errorf("unknown kernel: path %s, BF16Name() = %q", bf16Path().name, BF16Name())
	}
}

// TestPeakBF16GFLOPS checks that the peak is measured where the CPU has
// AVX512_BF16 (a positive rate), refused with a reason otherwise, and
// that a bad thread count is an error.
func TestPeakBF16GFLOPS(t *testing.T) {
	if _, err := PeakBF16GFLOPS(0); err == nil {
		t.Error("PeakBF16GFLOPS(0) accepted")
	}
	got, err := PeakBF16GFLOPS(1)
	if ok, _ := bf16AVX512Usable(); !ok {
		if err != ErrPeakBF16Unknown {
			t.Errorf("without AVX512_BF16: %v, %v; want ErrPeakBF16Unknown", got, err)
		}
		return
	}
	if err != nil || !(got > 0) {
		t.Errorf("PeakBF16GFLOPS(1) = %v, %v; want a positive rate", got, err)
	}
}
