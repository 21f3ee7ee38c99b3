package gemm

// The portable bf16 micro-kernel: VDPBF16PS computed lane by lane in Go,
// to the bit. What the instruction does to one float32 lane, measured
// against the hardware (TestBF16DotMatchesVDPBF16PS) and as Intel's
// definition says:
//
//	acc = fl(acc + a_hi·b_hi)   the odd step first
//	acc = fl(acc + a_lo·b_lo)   then the even one
//
// where each product of two bfloat16 is exact, fl rounds to nearest even,
// denormal inputs count as zero and a result whose magnitude, rounded to
// 24 bits with an unbounded exponent, is below 2⁻¹²⁶ becomes a zero of
// its sign (the instruction ignores MXCSR: DAZ and FTZ always on).

import (
	"math"
	"unsafe"
)

// bf16Dot2 is one lane of VDPBF16PS: acc plus the two products of the
// bfloat16 pairs a and b (lo | hi<<16), subnormals in them already zero
// (packing makes them so). acc is never subnormal either (it starts at
// zero and every step flushes), which the instruction would read as zero.
func bf16Dot2(acc float32, a, b uint32) float32 {
	acc = bf16RoundFTZ(float64(acc) + float64(math.Float32frombits(a&0xffff0000))*float64(math.Float32frombits(b&0xffff0000)))
	return bf16RoundFTZ(float64(acc) + float64(math.Float32frombits(a<<16))*float64(math.Float32frombits(b<<16)))
}

// bf16RoundFTZ rounds s, the sum of a float32 and a product of two
// bfloat16, to float32 as VDPBF16PS does. s is that sum exactly whenever
// the rounding needs it: a product of two bfloat16 has at most 16
// significant bits, so a float64 sum of it and a float32 is either exact
// or so far from a float32 rounding boundary that rounding it again
// changes nothing (a boundary is a float64 number, and missing it by
// less than 2⁻⁵³ relative would take more than 16 bits).
func bf16RoundFTZ(s float64) float32 {
	if a := math.Abs(s); a < 0x1p-126 { // false for NaN
		// Rounded to 24 bits it reaches 2⁻¹²⁶ only from 2⁻¹²⁶−2⁻¹⁵¹ up
		// (the tie goes to 2⁻¹²⁶, whose significand is even).
		if a >= 0x1p-126-0x1p-151 {
			return float32(math.Copysign(0x1p-126, s))
		}
		return float32(math.Copysign(0, s))
	}
	return float32(s)
}

// bf16MicroGo is the portable micro-kernel: a 4×4 tile from pair-row
// panels of width 4, each lane's pairs summed by bf16Dot2, then
// c = fl(alpha·sum) + fl(beta·c) as the assembly kernels round it.
func bf16MicroGo(kp int, a *uint32, _ int, b *uint32, c *float32, ldc int, alpha, beta float32, _ []float32) {
	const mr, nr = 4, 4
	ap := unsafe.Slice(a, kp*mr)
	bp := unsafe.Slice(b, kp*nr)
	var acc [mr][nr]float32
	for p := range kp {
		av := ap[p*mr : p*mr+mr : p*mr+mr]
		bv := bp[p*nr : p*nr+nr : p*nr+nr]
		for i := range mr {
			for j := range nr {
				acc[i][j] = bf16Dot2(acc[i][j], av[i], bv[j])
			}
		}
	}
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	for i := range mr {
		row := cs[i*ldc : i*ldc+nr : i*ldc+nr]
		for j := range nr {
			t := float32(alpha * acc[i][j])
			if beta == 0 {
				row[j] = t
			} else {
				row[j] = t + float32(beta*row[j])
			}
		}
	}
}
