package activation

// The slice kernels (assembly where the CPU has it, portable loops
// otherwise) against the scalar reference F, Deriv, Deriv2: float64 must
// agree bit for bit, float32 must equal the float64 reference rounded to
// float32 (bit for bit but for the sign of zero). Inputs: a dense grid over
// [−40, 40], random values, both tails, and special values.

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/parallel"
	"github.com/geluproject/gelu/ops/simd"
)

// kernelActivations are the activations under test: every predefined one,
// and parameters at the edges of what the kernels accept.
func kernelActivations() []Activation {
	return append(All(), SigmoidGated(0.01), SigmoidGated(37), SigmoidGated(1e31), ELUAlpha(0.5))
}

// specials64 are the special inputs: zeros, infinities, NaN, subnormals of
// both precisions, the largest values, and the edges of the assembly's
// ranges (37 for GELU, 20 for the tanh gate).
func specials64() []float64 {
	s := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		5e-324, -5e-324, 2.2250738585072014e-308, 1.401298464324817e-45, -1.401298464324817e-45,
		1.1754943508222875e-38, math.MaxFloat32, -math.MaxFloat32, math.MaxFloat64, -math.MaxFloat64,
		1e-300, -1e-300, 1e-30, -1e-30, 1e20, -1e20, 1e6, -1e6}
	for _, e := range []float64{14.9, 15, 15.1, 16, 20, 21, 37, 37.5, 38, 40, 54, 60, 700, 746, 800, 1490, 1500} {
		s = append(s, e, -e, math.Nextafter(e, 0), -math.Nextafter(e, 0), math.Nextafter(e, 100), -math.Nextafter(e, 100))
	}
	// The edges of the float32-lane gated kernels (ops/simd/asm/gated32.go):
	// XMax for the tanh form, the sigmoid form and SiLU, the windows of
	// relative width 2^−10 around the roots of f' and f”, and 2^−100, below
	// which f is left to the reference. Each with its float32 neighbours.
	var edges []float64
	for _, r := range []float64{0.7524614220710162, 1.4185040087908285, 0.7511542554412889,
		1.4097281319127308, 1.278464542761074, 2.399357280515468} {
		edges = append(edges, r, r*(1-0x1p-10), r*(1+0x1p-10))
	}
	edges = append(edges, 9.125, 40.5, 69, 0x1p-100)
	// The exact-GELU float32-lane kernels (ops/simd/asm/gelu32.go): the
	// ends of their intervals of z (the bits of z + 1: 8 per octave), the
	// root of f' and its Fast2Sum bound z0/3 and exact-difference bound
	// 1.7518, √2 (the root of f”), and the exception bounds 12.6875, 13.
	for e := 0.0; e < 4; e++ {
		for m := 0.0; m < 8; m++ {
			edges = append(edges, math.Exp2(e)*(1+m/8)-1)
		}
	}
	edges = append(edges, 0.7517915246935645, 0.7517915246935645/3, 1.7518, math.Sqrt2, 12.6875, 13)
	for _, e := range edges {
		v := float32(e)
		for i := 0; i < 3; i++ {
			s = append(s, float64(v), -float64(v))
			v = math.Nextafter32(v, 0)
		}
		v = float32(e)
		for i := 0; i < 3; i++ {
			v = math.Nextafter32(v, 1000)
			s = append(s, float64(v), -float64(v))
		}
	}
	// x whose t = −x/√2 falls on either side of math.Erfc's range limits,
	// where the float64 GELU kernels switch formulas.
	for _, t := range []float64{0x1p-56, 0.25, 0.84375, 1.25, 1 / 0.35, 6} {
		for _, sign := range []float64{1, -1} {
			x := -sign * t * math.Sqrt2
			for i := 0; i < 20; i++ {
				x = math.Nextafter(x, 0)
			}
			for i := 0; i < 40; i++ {
				s = append(s, x)
				x = math.Nextafter(x, math.Inf(int(-sign)))
			}
		}
	}
	return s
}

// kernelInputs is the test grid for one precision.
func kernelInputs(r *rng.RNG, f32 bool) []float64 {
	var xs []float64
	for k := -2560; k <= 2560; k++ {
		xs = append(xs, float64(k)/64)
	}
	for i := 0; i < 4000; i++ {
		xs = append(xs, r.Uniform(-40, 40), 6*r.Normal())
	}
	for i := 0; i < 500; i++ {
		xs = append(xs, -r.Uniform(30, 60), math.Copysign(math.Pow(10, r.Uniform(-40, 38)), r.Uniform(-1, 1)))
	}
	xs = append(xs, specials64()...)
	if f32 {
		for i, v := range xs {
			xs[i] = float64(float32(v))
		}
	}
	return xs
}

// termScale is the sum of the magnitudes of the terms whose sum is f^(k),
// computed here from the closed forms with the standard library: the float32
// kernels are accurate relative to it where the terms cancel.
func termScale(a Activation, k int, x float64) float64 {
	if k == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
	switch a.row {
	case &geluRow:
		if k == 1 {
			return 0.5*math.Erfc(-x/math.Sqrt2) + math.Abs(x)*phi
		}
		return (2 + x*x) * phi
	case &geluTanhRow, &geluSigmoidRow, &siluRow, &sigmoidGatedRow:
		var q, q1, q2 float64
		if a.row == &geluTanhRow {
			c := math.Sqrt(2 / math.Pi)
			q, q1, q2 = 2*c*(x+0.044715*x*x*x), 2*c*(1+3*0.044715*x*x), 12*c*0.044715*x
		} else {
			q, q1 = a.param.hi*x, a.param.hi
		}
		s, t := 1/(1+math.Exp(-q)), 1/(1+math.Exp(q))
		if k == 1 {
			return s + math.Abs(x*q1)*s*t
		}
		return s * t * (2*math.Abs(q1) + math.Abs(x*(t-s))*q1*q1 + math.Abs(x*q2))
	}
	return 0
}

// ulp32 is the distance in float32 steps between a and b (±0 equal, NaN
// only equal to NaN).
func ulp32(a, b float32) float64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.Inf(1)
	}
	if a == b {
		return 0
	}
	ord := func(v float32) int64 {
		u := int64(int32(math.Float32bits(v)))
		if u < 0 {
			return -(u & math.MaxInt32)
		}
		return u
	}
	return math.Abs(float64(ord(a) - ord(b)))
}

// want returns g·f^(k)(x) from the scalar reference, as float64.
func want(a Activation, k int, x, g float64) float64 {
	v := []func(float64) float64{a.F, a.Deriv, a.Deriv2}[k](x)
	if k > 0 {
		v *= g
	}
	return v
}

// runKernel applies the kernel of order k through the internal entry points
// (forward, derivative) used by the gorgonia op.
func runKernel[T graph.Float](a Activation, k int, dst, x, g []T, add bool) {
	if k == 0 {
		forward(a, dst, x)
		return
	}
	derivative(a, k, dst, x, g, add)
}

// check64 compares float64 kernel output with the reference, bit for bit.
func check64(t *testing.T, a Activation, k int, xs, gs, before, got []float64, add bool) {
	t.Helper()
	bad := 0
	for i, x := range xs {
		w := want(a, k, x, gs[i])
		if add {
			w += before[i]
		}
		if math.Float64bits(w) != math.Float64bits(got[i]) && !(w != w && got[i] != got[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%s f^(%d) float64 add=%v at x=%v (%x), g=%v: got %v, want %v", a, k, add, x, math.Float64bits(x), gs[i], got[i], w)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d mismatches in all", bad)
	}
}

// check32 compares float32 output with the reference: the float64 value
// rounded once to float32 (then added to dst in float32 for add), exactly
// what the portable loops compute. The assembly kernels must match it bit
// for bit, except that a zero may have the other sign (where the exact
// value is a tiny number that underflows, the two evaluations may round it
// from different sides): they store a lane only when its rounding is
// certain. The float32-lane kernels (lane32: avx512 and avx2 paths) may
// instead give a neighbour of the rounded value, so within 1 ulp of the
// reference (then added to dst).
func check32(t *testing.T, a Activation, k int, xs, gs []float32, before, got []float32, add bool) {
	t.Helper()
	bad := 0
	lane := laneKernel(a, k)
	for i, x := range xs {
		w := float32(want(a, k, float64(x), float64(gs[i])))
		ok := func(w float32) bool {
			if add {
				w += before[i]
			}
			return w == got[i] || (w != w && got[i] != got[i])
		}
		if ok(w) || lane && (ok(math.Nextafter32(w, float32(math.Inf(1)))) || ok(math.Nextafter32(w, float32(math.Inf(-1))))) {
			continue
		}
		if add {
			w += before[i]
		}
		if bad++; bad <= 5 {
			t.Errorf("%s f^(%d) float32 add=%v at x=%v, g=%v: got %v, want %v (%v ulp; terms %g)",
				a, k, add, x, gs[i], got[i], w, ulp32(got[i], w), termScale(a, k, float64(x)))
		}
	}
	if bad > 5 {
		t.Errorf("... %d mismatches in all", bad)
	}
}

// laneKernel reports whether a's f^(k) in float32 runs a float32-lane
// kernel on the current path.
func laneKernel(a Activation, k int) bool {
	var p [8]float64
	return simd.Available && (simd.Current == simd.AVX512 || simd.Current == simd.AVX2) &&
		a.row.lane32 != nil && a.row.lane32(k, a.param, &p) != simd.None
}

// eachPath runs f on every kernel path this CPU has (package simd).
func eachPath(t *testing.T, f func(t *testing.T)) {
	for _, p := range simd.Paths() {
		t.Run(p.String(), func(t *testing.T) {
			defer simd.Use(simd.Use(p))
			f(t)
		})
	}
}

func TestKernelsMatchReference(t *testing.T) {
	r := rng.New(11, "kernels")
	eachPath(t, func(t *testing.T) {
		for _, a := range kernelActivations() {
			for k := 0; k <= 2; k++ {
				for _, add := range []bool{false, true} {
					if add && k == 0 {
						continue
					}
					testKernel64(t, r, a, k, add)
					testKernel32(t, r, a, k, add)
				}
			}
		}
	})
}

func testKernel64(t *testing.T, r *rng.RNG, a Activation, k int, add bool) {
	xs := kernelInputs(r, false)
	gs, before := make([]float64, len(xs)), make([]float64, len(xs))
	for i := range xs {
		gs[i], before[i] = r.Normal(), r.Normal()
	}
	gs[0], gs[1], gs[2] = 0, math.Inf(1), -1e300
	got := append([]float64(nil), before...)
	runKernel(a, k, got, xs, gs, add)
	check64(t, a, k, xs, gs, before, got, add)
}

func testKernel32(t *testing.T, r *rng.RNG, a Activation, k int, add bool) {
	xs64 := kernelInputs(r, true)
	xs, gs, before := make([]float32, len(xs64)), make([]float32, len(xs64)), make([]float32, len(xs64))
	for i := range xs {
		xs[i], gs[i], before[i] = float32(xs64[i]), float32(r.Normal()), float32(r.Normal())
	}
	gs[0], gs[1] = 0, float32(math.Inf(1))
	got := append([]float32(nil), before...)
	runKernel(a, k, got, xs, gs, add)
	check32(t, a, k, xs, gs, before, got, add)
}

// Backward and Backward2 with g chosen so that g·f' and g·f” land just
// above and below float32's smallest normal. A float32-lane kernel that
// rounds g·lo on its own (to the subnormal grid there) adds up to half an
// ulp to the final rounding's half; the AVX-512 loop multiplies by g's
// mantissa and scales last, which adds at most a quarter (a second rounding
// into the subnormal range), so its results stay within 0.9 ulp of the
// float64 reference here (the exhaustive proof's worst f' and f” with
// g = 1 are below 0.6). The AVX2 loop multiplies by g itself: near the
// underflow its results can be off by slightly more than an ulp (1.02 at
// most in 4M random draws), so that path is checked away from it only
// (TestKernelsMatchReference).
func TestKernelsNearUnderflow(t *testing.T) {
	r := rng.New(13, "near underflow")
	eachPath(t, func(t *testing.T) {
		for _, a := range kernelActivations() {
			for k := 1; k <= 2; k++ {
				lane := laneKernel(a, k)
				if lane && simd.Current == simd.AVX2 {
					continue
				}
				var xs, gs []float32
				for _, x := range kernelInputs(r, true) {
					d := math.Abs(want(a, k, x, 1))
					if d == 0 || math.IsInf(d, 0) || math.IsNaN(d) {
						continue
					}
					for _, scale := range []float64{0x1p-126, 0x1p-130} {
						g := float32(math.Copysign(r.Uniform(1, 2)*scale/d, r.Normal()))
						if g != 0 && !math.IsInf(float64(g), 0) {
							xs, gs = append(xs, float32(x)), append(gs, g)
						}
					}
				}
				before := make([]float32, len(xs))
				got := append([]float32(nil), before...)
				runKernel(a, k, got, xs, gs, false)
				check32(t, a, k, xs, gs, before, got, false)
				if worst, at := worstULP(a, k, xs, gs, got); lane && worst > 0.9 {
					t.Errorf("%s f^(%d) near float32's underflow: %.3f ulp at x=%v, g=%v (want at most 0.9)", a, k, worst, xs[at], gs[at])
				}
			}
		}
	})
}

// Backward and Backward2 of exact GELU at the float32 inputs nearest the
// roots of f' (x = −z0) and f” (±√2), times many g: there the result is a
// small difference, and the float32-lane kernels must carry it as an exact
// product plus small terms (a rounded lo part, or z0 in two floats, shows
// for g other than 1: 1.19 ulp before the root's D was renormalized and z0
// got its third float). Within 0.9 ulp of the float64 reference.
func TestKernelsAtRoots(t *testing.T) {
	roots := [][]float64{1: {-0.7517915246935645}, 2: {math.Sqrt2, -math.Sqrt2}}
	eachPath(t, func(t *testing.T) {
		for k := 1; k <= 2; k++ {
			var xs, gs []float32
			for _, r := range roots[k] {
				v := float32(r)
				for i := 0; i < 8; i++ {
					v = math.Nextafter32(v, 0)
				}
				for i := 0; i < 17; i++ {
					for j := 0; j < 2000; j++ {
						xs = append(xs, v)
						gs = append(gs, float32(math.Exp2(float64(j%50-25))*(1+float64(j)/2000)))
					}
					v = math.Nextafter32(v, float32(10*r))
				}
			}
			before := make([]float32, len(xs))
			got := append([]float32(nil), before...)
			runKernel(GELU, k, got, xs, gs, false)
			check32(t, GELU, k, xs, gs, before, got, false)
			if worst, at := worstULP(GELU, k, xs, gs, got); laneKernel(GELU, k) && worst > 0.9 {
				t.Errorf("gelu f^(%d) at its root: %.3f ulp at x=%v, g=%v (want at most 0.9)", k, worst, xs[at], gs[at])
			}
		}
	})
}

// worstULP is the largest error of got in float32 ulp of the float64
// reference g·f^(k)(x) (check32 allows a neighbour of the rounded
// reference, up to 1.5 ulp of the true value).
func worstULP(a Activation, k int, xs, gs, got []float32) (worst float64, at int) {
	for i, x := range xs {
		ref := want(a, k, float64(x), float64(gs[i]))
		_, e := math.Frexp(ref)
		if err := math.Abs(float64(got[i])-ref) / math.Ldexp(1, max(e-24, -149)); err > worst {
			worst, at = err, i
		}
	}
	return worst, at
}

// Every length from 0 to 40 and around the exception block and the
// parallel split, with sentinels around dst: nothing outside it is written,
// and every element inside is.
func TestKernelsLengthsAndBounds(t *testing.T) {
	r := rng.New(12, "lengths")
	lengths := []int{excBlockLen - 1, excBlockLen, excBlockLen + 1, 3*excBlockLen + 5, (2 * parallel.MinGrain) + 3}
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	eachPath(t, func(t *testing.T) { testLengthsAndBounds(t, r, lengths) })
}

func testLengthsAndBounds(t *testing.T, r *rng.RNG, lengths []int) {
	for _, a := range []Activation{GELU, GELUTanh, SiLU, ReLU, ELU} { // ELU: the portable block loop
		for _, n := range lengths {
			for k := 0; k <= 2; k++ {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = 8 * r.Normal()
					if i%7 == 3 {
						xs[i] = -45 // an exception lane for the float64 and float32-lane kernels
					}
				}
				ones := make([]float64, n)
				for i := range ones {
					ones[i] = 1
				}
				for i, v := range runGuarded(t, a, k, xs, ones) {
					if math.Float64bits(v) != math.Float64bits(want(a, k, xs[i], 1)) {
						t.Fatalf("%s f^(%d) n=%d: dst[%d] = %v, want %v", a, k, n, i, v, want(a, k, xs[i], 1))
					}
				}
				x32, one32 := make([]float32, n), make([]float32, n)
				for i := range x32 {
					x32[i], one32[i] = float32(xs[i]), 1
				}
				d32 := runGuarded(t, a, k, x32, one32)
				check32(t, a, k, x32, one32, make([]float32, n), d32, false)
			}
		}
	}
}

// runGuarded runs the kernel into a dst with 8 sentinels on each side and
// fails if any of them changed; it returns dst.
func runGuarded[T graph.Float](t *testing.T, a Activation, k int, x, g []T) []T {
	t.Helper()
	n := len(x)
	buf := make([]T, n+16)
	for i := range buf {
		buf[i] = 12345
	}
	dst := buf[8 : 8+n]
	runKernel(a, k, dst, x, g, false)
	for i, v := range buf {
		if (i < 8 || i >= 8+n) && v != 12345 {
			t.Fatalf("%s f^(%d) %T n=%d: wrote outside dst at %d", a, k, v, n, i-8)
		}
	}
	return dst
}

// excBlockLen is the exception block of the assembly path (any length on
// other platforms; the test only needs a size around which to probe).
const excBlockLen = 4096

// dst may alias x or g, also in lanes the assembly hands back to Go.
func TestKernelsAliasing(t *testing.T) {
	eachPath(t, testAliasing)
}

func testAliasing(t *testing.T) {
	r := rng.New(13, "alias")
	const n = 1000
	for _, a := range []Activation{GELU, GELUTanh, GELUSigmoid} {
		for k := 0; k <= 2; k++ {
			xs, gs := make([]float64, n), make([]float64, n)
			for i := range xs {
				xs[i], gs[i] = 10*r.Normal(), r.Normal()
				if i%5 == 0 {
					xs[i] = -40 - float64(i%11) // exceptions
				}
			}
			want := make([]float64, n)
			runKernel(a, k, want, xs, gs, false)
			x1 := append([]float64(nil), xs...)
			runKernel(a, k, x1, x1, gs, false) // dst = x
			if k > 0 {
				g1 := append([]float64(nil), gs...)
				runKernel(a, k, g1, xs, g1, false) // dst = g
				compareBits(t, a, k, "dst=g", g1, want)
			}
			compareBits(t, a, k, "dst=x", x1, want)

			// float32: the same kernel with and without aliasing, bit for bit.
			x32, g32 := make([]float32, n), make([]float32, n)
			for i := range xs {
				x32[i], g32[i] = float32(xs[i]), float32(gs[i])
			}
			want32 := make([]float32, n)
			runKernel(a, k, want32, x32, g32, false)
			a1 := append([]float32(nil), x32...)
			runKernel(a, k, a1, a1, g32, false)
			for i := range a1 {
				if math.Float32bits(a1[i]) != math.Float32bits(want32[i]) {
					t.Fatalf("%s f^(%d) float32 dst=x: element %d = %v, want %v", a, k, i, a1[i], want32[i])
				}
			}
		}
	}
}

func compareBits(t *testing.T, a Activation, k int, what string, got, want []float64) {
	t.Helper()
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s f^(%d) %s: element %d = %v, want %v", a, k, what, i, got[i], want[i])
		}
	}
}

// Types defined over float32 and float64 go through the same kernels.
func TestKernelsDefinedTypes(t *testing.T) {
	type myFloat float32
	x := []myFloat{-3, -0.5, 0, 0.5, 3}
	dst := make([]myFloat, len(x))
	if err := Forward(GELU, dst, x); err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		if w := float32(GELU.F(float64(v))); ulp32(float32(dst[i]), w) > 1 {
			t.Errorf("GELU(%v) = %v, want %v", v, dst[i], w)
		}
	}
}

// FuzzKernels checks one input of every float64 and float32 kernel against
// the reference; the seed corpus runs with every `go test`.
func FuzzKernels(f *testing.F) {
	for _, v := range specials64() {
		f.Add(v, 1.0, uint8(0))
	}
	f.Add(-0.7517916243, 1.0, uint8(1))
	f.Add(math.Sqrt2, -2.0, uint8(2))
	f.Add(-36.999, 0.5, uint8(3))
	f.Fuzz(func(t *testing.T, x, g float64, sel uint8) {
		acts := kernelActivations()
		a := acts[int(sel)%len(acts)]
		k := int(sel/16) % 3
		// Lanes around x, so that the fuzzed value meets every lane
		// position and the exception path with neighbours.
		xs := []float64{x, -x, x / 2, 2 * x, x + 1, x - 1, 0, -40, x, 3}
		gs := make([]float64, len(xs))
		for i := range gs {
			gs[i] = g
		}
		for _, p := range simd.Paths() {
			old := simd.Use(p)
			got := make([]float64, len(xs))
			runKernel(a, k, got, xs, gs, false)
			check64(t, a, k, xs, gs, make([]float64, len(xs)), got, false)
			x32, g32 := make([]float32, len(xs)), make([]float32, len(xs))
			for i := range xs {
				x32[i], g32[i] = float32(xs[i]), float32(g)
			}
			got32 := make([]float32, len(xs))
			runKernel(a, k, got32, x32, g32, false)
			check32(t, a, k, x32, g32, make([]float32, len(xs)), got32, false)
			simd.Use(old)
		}
	})
}

// The float32 assembly kernels store a lane only when its rounding is
// certain; on many random inputs (normal, uniform, log-uniform magnitudes)
// they must agree with the portable loops everywhere, on every path; the
// float32-lane kernels within 1 ulp.
func TestKernelsFloat32MatchPortable(t *testing.T) {
	if !simd.Available {
		t.Skip("no assembly kernels on this machine")
	}
	eachPath(t, testFloat32MatchPortable)
}

func testFloat32MatchPortable(t *testing.T) {
	const n = 100000
	r := rng.New(14, "float32 stress")
	xs, gs := make([]float32, n), make([]float32, n)
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = float32(3 * r.Normal())
		case 1:
			xs[i] = float32(r.Uniform(-25, 25))
		default:
			xs[i] = float32(math.Copysign(math.Pow(10, r.Uniform(-8, 3)), r.Uniform(-1, 1)))
		}
		gs[i] = float32(r.Normal())
	}
	for _, a := range []Activation{GELU, GELUTanh, SiLU, GELUSigmoid, SigmoidGated(0.3)} {
		for k := 0; k <= 2; k++ {
			got, want := make([]float32, n), make([]float32, n)
			runKernel(a, k, got, xs, gs, false)
			lane := laneKernel(a, k)
			p := simd.Use(simd.Generic)
			runKernel(a, k, want, xs, gs, false)
			simd.Use(p)
			bad := 0
			for i := range got {
				if d := ulp32(got[i], want[i]); d > 1 || d == 1 && !lane {
					if bad++; bad <= 3 {
						t.Errorf("%s f^(%d) at x=%v, g=%v: assembly %v, portable %v", a, k, xs[i], gs[i], got[i], want[i])
					}
				}
			}
			if bad > 3 {
				t.Errorf("%s f^(%d): %d of %d differ", a, k, bad, n)
			}
		}
	}
}

// parallelFor runs body on chunks that cover [0, n) exactly once, for
// lengths around its thresholds and several GOMAXPROCS.
func TestParallelForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, (2 * parallel.MinGrain) - 1, (2 * parallel.MinGrain), (2 * parallel.MinGrain) + 1, 3*(2*parallel.MinGrain) + 7, 1 << 20} {
			hits := make([]int32, n)
			parallel.Elements(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("GOMAXPROCS=%d n=%d: element %d covered %d times", procs, n, i, h)
				}
			}
		}
	}
}

// Results are deterministic on every path: an element's value does not
// depend on the number of cores, where a chunk or block starts, or the
// element's lane. The same inputs are run at several GOMAXPROCS and at
// offsets 1 to 17 into the slice (every lane position of AVX-512 and AVX2
// and a tail), and must agree bit for bit with the run over the whole slice
// at GOMAXPROCS 1. float32 (the float32-lane kernels' home) and float64.
func TestKernelsDeterministic(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		testDeterministic[float32](t)
		testDeterministic[float64](t)
	})
}

func testDeterministic[T graph.Float](t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	n := 3*parallel.MinGrain + 101 // several chunks, blocks and a tail
	r := rng.New(15, "determinism")
	xs, gs := make([]T, n), make([]T, n)
	for i := range xs {
		xs[i], gs[i] = T(4*r.Normal()), T(r.Normal())
		if i%997 == 0 {
			xs[i] = T(-13.5 - r.Uniform(0, 20)) // lanes handed back to Go
		}
	}
	for _, a := range []Activation{GELU, GELUTanh, SiLU} {
		for k := 0; k <= 2; k++ {
			runtime.GOMAXPROCS(1)
			ref := make([]T, n)
			runKernel(a, k, ref, xs, gs, false)
			for _, procs := range []int{2, 3, 8} {
				runtime.GOMAXPROCS(procs)
				for _, off := range []int{0, 1, 5, 8, 13, 17} {
					got := make([]T, n-off)
					runKernel(a, k, got, xs[off:], gs[off:], false)
					for i := range got {
						if math.Float64bits(float64(got[i])) != math.Float64bits(float64(ref[off+i])) && got[i] == got[i] {
							t.Fatalf("%s f^(%d) %T at x=%v: %v with GOMAXPROCS %d from offset %d, %v with 1 from 0",
								a, k, got[i], xs[off+i], got[i], procs, off, ref[off+i])
						}
					}
				}
			}
		}
	}
}
