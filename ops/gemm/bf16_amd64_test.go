//go:build amd64 && !noasm

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBF16DotMatchesVDPBF16PS checks the portable kernel's arithmetic,
// bf16Dot2, against the instruction itself, lane by lane: random
// accumulators and pairs over the whole exponent range (subnormal and
// infinite ones too), and the cases at the edge of the flush to zero.
func TestBF16DotMatchesVDPBF16PS(t *testing.T) {
	if ok, why := bf16AVX512Usable(); !ok {
		t.Skip(why)
	}
	f32 := math.Float32frombits
	pow := func(e int) uint32 { return uint32(127+e) << 7 } // the bf16 bits of 2^e
	type lane struct {
		acc  float32
		a, b uint32
	}
	edge := []lane{
		{f32(0x00800000), (pow(-75) | 0x8000) << 16, pow(-75) << 16},           // 2⁻¹²⁶ − 2⁻¹⁵⁰: flushed
		{f32(0x00800000), (pow(-75) | 0x8000) << 16, pow(-76) << 16},           // 2⁻¹²⁶ − 2⁻¹⁵¹: rounds up to 2⁻¹²⁶
		{f32(0x80800000), pow(-75)<<16 | 0x8000, pow(-75) << 16},               // a negative flush, then −0·0
		{f32(0x80800000), pow(-75) << 16, pow(-75) << 16},                      // a negative flush, then +0·0
		{f32(0x00000005), 0, 0},                                                // a subnormal accumulator
		{1, 0x0001 << 16, 0x3f80 << 16},                                        // a subnormal input
		{f32(0x7f7fffff), 0x7f7f << 16, 0x7f7f << 16},                          // overflow
		{0, 0x7f80<<16 | 0xff80, 0x3f80<<16 | 0x3f80},                          // ∞ − ∞
		{1, (pow(-24) | 0x8000) << 16, 0x3f80 << 16},                           // 1 − 2⁻²⁴
		{1, pow(-24)<<16 | pow(-24), 0x3f80<<16 | 0x3f80},                      // a tie twice
		{1, pow(-24)<<16 | (pow(-24) | 0x8000 + 1), 0x3f80<<16 | 0x3f80},       // order matters
		{1, (pow(-24)|0x8000+1)<<16 | pow(-24), 0x3f80<<16 | 0x3f80},           // the other order
		{f32(0x7fc01234), 0x3f80 << 16, 0x3f80 << 16},                          // NaN accumulator
		{-0.0, 0x8000 << 16, 0},                                                // −0 + −0·0
		{f32(0x00ffffff), (pow(-100) | 0x8000) << 16, (pow(-26) | 0x7f) << 16}, // down across 2⁻¹²⁶
	}
	r := rand.New(rand.NewPCG(9, 9))
	bf16Any := func(lo, hi int) uint32 { return uint32(r.Uint32()&0x807f | uint32(lo+r.IntN(hi-lo))<<7) }
	rounds := 20000
	if testing.Short() || ownRaceEnabled {
		rounds = 2000
	}
	var acc, want [16]float32
	var a, b [16]uint32
	for round := 0; round < rounds+(len(edge)+15)/16; round++ {
		for i := range 16 {
			var l lane
			switch e := round*16 + i; {
			case e < len(edge):
				l = edge[e]
			case round%3 == 0: // everything, subnormals and infinities included
				l = lane{f32(r.Uint32()), bf16Any(0, 256)<<16 | bf16Any(0, 256), bf16Any(0, 256)<<16 | bf16Any(0, 256)}
			case round%3 == 1: // near the flush to zero
				l = lane{f32(bf16Any(0, 20)<<16 | r.Uint32()&0xffff), bf16Any(30, 90)<<16 | bf16Any(30, 90), bf16Any(30, 90)<<16 | bf16Any(30, 90)}
			default: // ordinary magnitudes: rounding
				l = lane{f32(bf16Any(110, 145)<<16 | r.Uint32()&0xffff), bf16Any(110, 145)<<16 | bf16Any(110, 145), bf16Any(110, 145)<<16 | bf16Any(110, 145)}
			}
			// Packing flushes subnormal inputs; the instruction does too.
			daz := func(x uint32) uint32 {
				lo, hi := BF16(x), BF16(x>>16)
				src := bf16Src{b16: []BF16{lo, hi}}
				return src.at(0) | src.at(1)<<16
			}
			acc[i], a[i], b[i] = l.acc, l.a, l.b
			// The kernels' accumulators are never subnormal (they start
			// at zero and every step flushes); the instruction reads a
			// subnormal one as zero.
			in := l.acc
			if math.Float32bits(in)&0x7f800000 == 0 {
				in = float32(math.Copysign(0, float64(in)))
			}
			want[i] = bf16Dot2(in, daz(l.a), daz(l.b))
		}
		in := acc
		bf16Dot16(&acc[0], &a[0], &b[0])
		for i := range 16 {
			g, w := acc[i], want[i]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Fatalf("acc %#08x, a %#08x, b %#08x: VDPBF16PS gives %#08x (%g), bf16Dot2 %#08x (%g)",
					math.Float32bits(in[i]), a[i], b[i], math.Float32bits(g), g, math.Float32bits(w), w)
			}
		}
	}
}

// TestBF16PackAsmMatchesGo checks the AVX-512 packing against the Go
// packing, for float32 and bfloat16 operands (every bit pattern: the
// subnormals must become zeros), both orientations, the panel widths of
// both kernels, every column count, step counts around the 32-step chunks
// and odd ones, and strides whose padding is NaN (a read past the panel
// would show).
func TestBF16PackAsmMatchesGo(t *testing.T) {
	if ok, why := bf16AVX512Usable(); !ok {
		t.Skip(why)
	}
	r := rand.New(rand.NewPCG(8, 8))
	goKern := bf16Kernel{kAlign: 1}
	for _, w := range []int{12, 32} {
		for cols := 1; cols <= w; cols++ {
			for _, kc := range []int{1, 2, 3, 31, 32, 33, 64, 65, 100} {
				for _, kRows := range []bool{false, true} {
					// The panel is Y[p0:p0+kc][j0:j0+cols]; everything
					// else stored is NaN.
					j0, p0 := r.IntN(3), r.IntN(3)
					rows, width := j0+cols, p0+kc // k along each row
					r0, c0 := j0, p0
					if kRows {
						rows, width, r0, c0 = p0+kc, j0+cols, p0, j0
					}
					ld := width + r.IntN(3)
					x := make([]float32, rows*ld)
					for i := range rows {
						for j := range ld {
							x[i*ld+j] = float32(math.NaN())
							if i >= r0 && j >= c0 && j < width {
								x[i*ld+j] = float32(r.NormFloat64())
							}
						}
					}
					kp := (kc+1)/2 + r.IntN(2)
					want, got := make([]uint32, kp*w), make([]uint32, kp*w)
					xb := make([]BF16, len(x))
					for i := range x {
						// Every bfloat16 bit pattern, subnormals and NaNs
						// included, where x is not NaN padding.
						xb[i] = BF16(r.Uint32())
						if x[i] != x[i] {
							xb[i] = 0x7fc1
						}
					}
					for _, src := range []bf16Src{{isF32: true, f32: x, ld: ld}, {b16: xb, ld: ld}} {
						for i := range got {
							got[i] = 0xdeadbeef
						}
						bf16PackPairs(&goKern, want, w, &src, kRows, j0, cols, p0, kc, kp)
						bf16PackPairs(&bf16AVX512Path, got, w, &src, kRows, j0, cols, p0, kc, kp)
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("float32 %v, w %d, cols %d, kc %d, kRows %v, j0 %d, p0 %d: pair row %d lane %d = %#08x, want %#08x",
									src.isF32, w, cols, kc, kRows, j0, p0, i/w, i%w, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestBF16AMXMatchesItsEmulation runs the AMX kernel and its Go
// emulation (bf16AMXEmulatedPath, Intel's definition of TDPBF16PS: each
// lane's even product, then its odd one, each rounded) on the same
// products and wants the same bits. It runs only where the AMX path is
// usable (no AMX on the machines this was written on): a failure there
// means the hardware sums a pair differently from the definition, and the
// emulation (bf16MicroAMXEmulated) should follow the hardware.
func TestBF16AMXMatchesItsEmulation(t *testing.T) {
	if ok, why := bf16AMXPath.usable(); !ok {
		t.Skipf("AMX path: %s", why)
	}
	prev := bf16Path()
	t.Cleanup(func() { bf16Active.Store(prev) })
	r := rand.New(rand.NewPCG(12, 12))
	cases := append(ownCases(40, 10), ownCase{m: 70, n: 90, k: 1100, alpha: 1, beta: 1, tA: true})
	for _, rng := range [][2]int{{-20, 20}, {-66, -60}} {
		for _, c := range cases {
			if c.m*c.n == 0 {
				continue
			}
			a, b, cm := bf16WideOperands(c, r, rng[0], rng[1])
			_, colsA, _, colsB := storedShapes(c.tA, c.tB, c.m, c.n, c.k)
			colsA, colsB = max(1, colsA), max(1, colsB)
			var out [2][]float32
			for i, p := range []*bf16Kernel{&bf16AMXPath, &bf16AMXEmulatedPath} {
				bf16Active.Store(p)
				out[i] = append([]float32(nil), cm...)
				if err := GemmBF16(c.tA, c.tB, c.m, c.n, c.k, float32(c.alpha), a, colsA, b, colsB, float32(c.beta), out[i], c.n); err != nil {
					t.Fatal(err)
				}
			}
			for i := range out[0] {
				x, y := out[0][i], out[1][i]
				if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
					t.Fatalf("exponents %v, %v: C[%d][%d] = %v (%#08x) on AMX, %v (%#08x) emulated",
						rng, c, i/c.n, i%c.n, x, math.Float32bits(x), y, math.Float32bits(y))
				}
			}
		}
	}
}
