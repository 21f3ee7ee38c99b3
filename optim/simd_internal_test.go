package optim

// The assembly update kernels of package simd against the scalar loops of
// kernels.go, the reference: on every path this CPU runs, for every option
// and both dtypes, on lengths around the vector widths (the masked tail)
// and across several chunks, with NaN, ±Inf, ±0, subnormal and overflowing
// inputs, the results and the reported first non-finite index must be the
// loops' bit for bit. The index is also checked against a plain scan of the
// new parameters.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geluproject/gelu/ops/parallel"
	"github.com/geluproject/gelu/ops/simd"
)

// kernelLengths cover the empty tensor, the AVX2 and AVX-512 widths of
// both dtypes and their neighbours, odd lengths with long vector runs, and
// more than two chunks of parallel.For.
var kernelLengths = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1001, 1037, 2*parallel.MinGrain + 45}

// simdPaths returns the paths with assembly, failing if an update kernel is
// missing on one (the comparison would then be of the loop with itself).
func simdPaths(t *testing.T) []simd.Path {
	var ps []simd.Path
	for _, p := range simd.Paths() {
		if p == simd.Generic {
			continue
		}
		old := simd.Use(p)
		_, ok32 := simd.Adam32(nil, nil, nil, nil, nil, new([simd.AdamParams]float32), 0)
		_, ok64 := simd.SGD64(nil, nil, nil, new([simd.SGDParams]float64), 0)
		simd.Use(old)
		if !ok32 || !ok64 {
			t.Fatalf("path %v: no update kernel", p)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Skip("no assembly on this CPU or platform: only the portable loops run")
	}
	return ps
}

// specials are the values mixed into the inputs of the "special" cases.
var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
	1e-40, -1e-40, 5e-324, 1e38, -3e38, 1e300, -1e308, math.MaxFloat32, math.SmallestNonzeroFloat32}

// kernelInput is n seeded values of the given scale; with special, about
// one in eight is one of specials. Positive keeps the values ≥ 0 (a second
// moment), specials included but NaN.
func kernelInput[T float](rng *rand.Rand, n int, scale float64, special, positive bool) []T {
	x := make([]T, n)
	for i := range x {
		v := rng.NormFloat64() * scale
		if special && rng.IntN(8) == 0 {
			v = specials[rng.IntN(len(specials))]
		}
		if positive && !math.IsNaN(v) {
			v = math.Abs(v)
		}
		x[i] = T(v)
	}
	return x
}

// sameBits reports whether a and b are equal bit for bit, NaNs aside: a
// NaN made from two NaNs may carry either one's payload (the order of a
// commutative operation's operands is the compiler's choice), so any NaN
// matches any NaN.
func sameBits[T float](a, b []T) (int, bool) {
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		if math.IsNaN(x) && math.IsNaN(y) {
			continue
		}
		if math.Float64bits(x) != math.Float64bits(y) {
			return i, false
		}
	}
	return -1, true
}

// firstNonFinite scans p for the first NaN or ±Inf.
func firstNonFinite[T float](p []T) int {
	for i, v := range p {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

func clone[T float](x []T) []T {
	if x == nil {
		return nil
	}
	return append([]T{}, x...)
}

// runOn runs f with path p and restores the previous one.
func runOn(p simd.Path, f func()) {
	old := simd.Use(p)
	defer simd.Use(old)
	f()
}

// matchLoops runs a kernel (run returns its arrays, p first, and the index
// it reports) with the scalar loops and on each path, and compares.
func matchLoops[T float](t *testing.T, paths []simd.Path, names []string, run func() ([][]T, int), what func(simd.Path) string) {
	t.Helper()
	var want [][]T
	var jWant int
	runOn(simd.Generic, func() { want, jWant = run() })
	for _, path := range paths {
		var got [][]T
		var jGot int
		runOn(path, func() { got, jGot = run() })
		compare(t, what(path), names, got, want, jGot, jWant)
	}
}

// compare fails unless the arrays of got and want match and the reported
// indices agree with each other and with a scan of the new parameters.
func compare[T float](t *testing.T, what string, names []string, got, want [][]T, jGot, jWant int) {
	t.Helper()
	for a := range want {
		if i, ok := sameBits(got[a], want[a]); !ok {
			t.Fatalf("%s: %s[%d] = %v (%#x), the scalar loop's %v (%#x)", what, names[a], i,
				got[a][i], math.Float64bits(float64(got[a][i])), want[a][i], math.Float64bits(float64(want[a][i])))
		}
	}
	if scan := firstNonFinite(want[0]); jWant != scan {
		t.Fatalf("%s: the scalar loop reports index %d, the first non-finite parameter is %d", what, jWant, scan)
	}
	if jGot != jWant {
		t.Fatalf("%s: first non-finite index %d, the scalar loop's %d", what, jGot, jWant)
	}
}

func TestSIMDKernelsMatchLoops(t *testing.T) {
	paths := simdPaths(t)
	t.Run("float32", func(t *testing.T) {
		testSGDPaths[float32](t, paths)
		testAdamPaths[float32](t, paths)
	})
	t.Run("float64", func(t *testing.T) {
		testSGDPaths[float64](t, paths)
		testAdamPaths[float64](t, paths)
	})
}

func testSGDPaths[T float](t *testing.T, paths []simd.Path) {
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 1 << 7 {
		on := func(bit int) bool { return c&(1<<bit) != 0 }
		k := sgdKernel[T]{lr: 0.0137, weightDecay: 0, nesterov: on(3), maximize: on(4)}
		if on(0) {
			k.momentum = 0.9
		}
		if on(1) {
			k.dampening = 0.1
		}
		if on(2) {
			k.weightDecay = 3e-3
		}
		first, special := on(5), on(6)
		for _, n := range kernelLengths {
			p := kernelInput[T](rng, n, 1, special, false)
			g := kernelInput[T](rng, n, 0.1, special, false)
			var buf []T
			if k.momentum != 0 {
				buf = kernelInput[T](rng, n, 0.1, special, false)
			}
			run := func() ([][]T, int) {
				p, buf := clone(p), clone(buf)
				j := k.step(p, g, buf, first)
				return [][]T{p, buf}, j
			}
			matchLoops(t, paths, []string{"p", "buf"}, run, func(path simd.Path) string {
				return fmt.Sprintf("SGD %T %v n=%d μ=%v dampening=%v λ=%v nesterov=%v maximize=%v first=%v special=%v",
					T(0), path, n, k.momentum, k.dampening, k.weightDecay, k.nesterov, k.maximize, first, special)
			})
		}
	}
}

func testAdamPaths[T float](t *testing.T, paths []simd.Path) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 1 << 6 {
		on := func(bit int) bool { return c&(1<<bit) != 0 }
		h := adamHyper{lr: 2e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, decoupled: on(0), amsgrad: on(2), maximize: on(3)}
		if on(1) {
			h.weightDecay = 0.05
		}
		t0 := 1.0
		if on(4) {
			t0 = 37
		}
		special := on(5)
		var k adamKernel[T]
		k.set(&h, h.lr/(1-math.Pow(h.beta1, t0)), math.Sqrt(1-math.Pow(h.beta2, t0)))
		for _, n := range kernelLengths {
			p := kernelInput[T](rng, n, 1, special, false)
			g := kernelInput[T](rng, n, 0.1, special, false)
			m := kernelInput[T](rng, n, 0.01, special, false)
			v := kernelInput[T](rng, n, 1e-4, special, true)
			var vmax []T
			if h.amsgrad {
				vmax = kernelInput[T](rng, n, 1e-4, special, true)
			}
			run := func() ([][]T, int) {
				p, m, v, vmax := clone(p), clone(m), clone(v), clone(vmax)
				j := k.step(p, g, m, v, vmax)
				return [][]T{p, m, v, vmax}, j
			}
			matchLoops(t, paths, []string{"p", "m", "v", "vmax"}, run, func(path simd.Path) string {
				return fmt.Sprintf("Adam %T %v n=%d decoupled=%v λ=%v amsgrad=%v maximize=%v t=%v special=%v",
					T(0), path, n, h.decoupled, h.weightDecay, h.amsgrad, h.maximize, t0, special)
			})
		}
	}
}

// A single non-finite parameter anywhere (a vector's first or last lane,
// the masked tail, a later chunk) is the reported index on every path, and
// of two, the first.
func TestSIMDKernelsReportFirstNonFinite(t *testing.T) {
	paths := append(simdPaths(t), simd.Generic)
	const n = 2*parallel.MinGrain + 45
	rng := rand.New(rand.NewPCG(5, 6))
	p0 := kernelInput[float32](rng, n, 1, false, false)
	g := kernelInput[float32](rng, n, 0.1, false, false)
	for _, path := range paths {
		for _, at := range [][]int{{0}, {15}, {16}, {n - 1}, {n - 45}, {parallel.MinGrain + 7}, {n - 1, 8}, {30000, 3}, {17, 16}} {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
				p := clone(p0)
				for _, i := range at {
					p[i] = bad
				}
				want := slices.Min(at)
				var j int
				runOn(path, func() {
					k := sgdKernel[float32]{lr: 0.1}
					j = k.step(p, g, nil, false)
				})
				if j != want {
					t.Errorf("%v: %v at %v: index %d, want %d", path, bad, at, j, want)
				}
				// Adam: a huge gradient overflows v to +Inf, and the
				// update is then −stepSize·m/Inf = 0 and finite; an
				// infinite parameter stays infinite.
				p = clone(p0)
				for _, i := range at {
					p[i] = bad
				}
				runOn(path, func() {
					var k adamKernel[float32]
					k.set(&adamHyper{lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8}, 1e-2, 0.03)
					m, v := make([]float32, n), make([]float32, n)
					j = k.step(p, g, m, v, nil)
				})
				if j != want {
					t.Errorf("%v: Adam: %v at %v: index %d, want %d", path, bad, at, j, want)
				}
			}
		}
	}
}

// Lanes past the end of a tensor are computed on zeros and must not be
// reported: with an eps that rounds to 0 in float32, such a lane is
// 0/0 = NaN, while every real lane (v > 0) is finite.
func TestSIMDKernelsIgnoreLanesPastTheEnd(t *testing.T) {
	paths := simdPaths(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range kernelLengths[1:] {
		p := kernelInput[float32](rng, n, 1, false, false)
		g := kernelInput[float32](rng, n, 0.1, false, false)
		m := kernelInput[float32](rng, n, 0.01, false, false)
		v := kernelInput[float32](rng, n, 1e-4, false, true)
		for i := range v {
			v[i] += 1e-6
		}
		for _, path := range paths {
			var k adamKernel[float32]
			k.set(&adamHyper{lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-50}, 1e-2, 0.03)
			p := clone(p)
			var j int
			runOn(path, func() { j = k.step(p, g, clone(m), clone(v), nil) })
			if want := firstNonFinite(p); j != want || want != -1 {
				t.Errorf("%v n=%d: index %d, the first non-finite parameter is %d (want none)", path, n, j, want)
			}
		}
	}
}

// The gradient check finds the first NaN or ±Inf on every path: none, one
// anywhere (each lane of a vector, the tail, a later chunk), or several.
func TestSIMDFirstNonFinite(t *testing.T) {
	paths := append(simdPaths(t), simd.Generic)
	t.Run("float32", func(t *testing.T) { testFirstNonFinite[float32](t, paths) })
	t.Run("float64", func(t *testing.T) { testFirstNonFinite[float64](t, paths) })
}

func testFirstNonFinite[T float](t *testing.T, paths []simd.Path) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range kernelLengths {
		clean := kernelInput[T](rng, n, 1, false, false)
		for i := range clean {
			if rng.IntN(4) == 0 { // finite extremes and subnormals
				clean[i] = T([]float64{math.MaxFloat32, -math.MaxFloat32, 1e-40, math.Copysign(0, -1)}[rng.IntN(4)])
			}
		}
		cases := [][]int{nil}
		for _, i := range []int{0, 1, 7, 8, 15, 16, n - 1, n / 2, n - 9} {
			if i >= 0 && i < n {
				cases = append(cases, []int{i}, []int{i, rng.IntN(n)})
			}
		}
		for _, at := range cases {
			x := clone(clean)
			for _, i := range at {
				x[i] = T([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)])
			}
			want := firstNonFinite(x)
			for _, path := range paths {
				var j int
				runOn(path, func() {
					var k finiteKernel[T]
					j = k.first(x)
				})
				if j != want {
					t.Errorf("%T %v n=%d, non-finite at %v: index %d, want %d", T(0), path, n, at, j, want)
				}
			}
		}
	}
}
