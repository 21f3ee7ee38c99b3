package main

// Bit-exact vector copies of the float64 scalar code the float64 kernels
// must agree with: math.Erfc and the double-double helpers of package activation.
//
// The coefficients below are those of the Go standard library's
// src/math/erf.go, which carries this notice:
//
//	The original C code and the long comment below are from FreeBSD's
//	/usr/src/lib/msun/src/s_erf.c and came with this notice.
//
//	====================================================
//	Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
//	Developed at SunPro, a Sun Microsystems, Inc. business.
//	Permission to use, copy, modify, and distribute this
//	software is freely granted, provided that this notice
//	is preserved.
//	====================================================

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

const (
	erx = 8.45062911510467529297e-01
	// [0, 0.84375]
	pp0 = 1.28379167095512558561e-01
	pp1 = -3.25042107247001499370e-01
	pp2 = -2.84817495755985104766e-02
	pp3 = -5.77027029648944159157e-03
	pp4 = -2.37630166566501626084e-05
	qq1 = 3.97917223959155352819e-01
	qq2 = 6.50222499887672944485e-02
	qq3 = 5.08130628187576562776e-03
	qq4 = 1.32494738004321644526e-04
	qq5 = -3.96022827877536812320e-06
	// [0.84375, 1.25]
	pa0 = -2.36211856075265944077e-03
	pa1 = 4.14856118683748331666e-01
	pa2 = -3.72207876035701323847e-01
	pa3 = 3.18346619901161753674e-01
	pa4 = -1.10894694282396677476e-01
	pa5 = 3.54783043256182359371e-02
	pa6 = -2.16637559486879084300e-03
	qa1 = 1.06420880400844228286e-01
	qa2 = 5.40397917702171048937e-01
	qa3 = 7.18286544141962662868e-02
	qa4 = 1.26171219808761642112e-01
	qa5 = 1.36370839120290507362e-02
	qa6 = 1.19844998467991074170e-02
	// [1.25, 1/0.35]
	ra0 = -9.86494403484714822705e-03
	ra1 = -6.93858572707181764372e-01
	ra2 = -1.05586262253232909814e+01
	ra3 = -6.23753324503260060396e+01
	ra4 = -1.62396669462573470355e+02
	ra5 = -1.84605092906711035994e+02
	ra6 = -8.12874355063065934246e+01
	ra7 = -9.81432934416914548592e+00
	sa1 = 1.96512716674392571292e+01
	sa2 = 1.37657754143519042600e+02
	sa3 = 4.34565877475229228821e+02
	sa4 = 6.45387271733267880336e+02
	sa5 = 4.29008140027567833386e+02
	sa6 = 1.08635005541779435134e+02
	sa7 = 6.57024977031928170135e+00
	sa8 = -6.04244152148580987438e-02
	// [1/0.35, 28]
	rb0 = -9.86494292470009928597e-03
	rb1 = -7.99283237680523006574e-01
	rb2 = -1.77579549177547519889e+01
	rb3 = -1.60636384855821916062e+02
	rb4 = -6.37566443368389627722e+02
	rb5 = -1.02509513161107724954e+03
	rb6 = -4.83519191608651397019e+02
	sb1 = 3.03380607434824582924e+01
	sb2 = 3.25792512996573918826e+02
	sb3 = 1.53672958608443695994e+03
	sb4 = 3.19985821950859553908e+03
	sb5 = 2.55305040643316442583e+03
	sb6 = 4.74528541206955367215e+02
	sb7 = -2.24409524465858183362e+01
)

// erfcRows holds the Horner coefficients of erfc's four ranges, one row per
// step: entry 0 for [0, 0.84375), 1 for [0.84375, 1.25), 2 for [1.25,
// 1/0.35), 3 for [1/0.35, 28). Shorter polynomials get leading zeros:
// starting Horner's rule from zeros reproduces the shorter evaluation
// exactly (0 + v·0 = 0, then c + v·0 = c).
var (
	erfcNum = [][4]float64{
		{0, 0, ra7, 0},
		{0, pa6, ra6, rb6},
		{0, pa5, ra5, rb5},
		{pp4, pa4, ra4, rb4},
		{pp3, pa3, ra3, rb3},
		{pp2, pa2, ra2, rb2},
		{pp1, pa1, ra1, rb1},
		{pp0, pa0, ra0, rb0},
	}
	erfcDen = [][4]float64{
		{0, 0, sa8, 0},
		{0, 0, sa7, sb7},
		{0, qa6, sa6, sb6},
		{qq5, qa5, sa5, sb5},
		{qq4, qa4, sa4, sb4},
		{qq3, qa3, sa3, sb3},
		{qq2, qa2, sa2, sb2},
		{qq1, qa1, sa1, sb1},
		// the constant term, 1, is added last
	}
)

func rowMem(r [4]float64) Mem {
	var w [8]uint64
	for i, v := range r {
		w[i] = math.Float64bits(v)
	}
	return consts.vec8(w)
}

// goErfc returns math.Erfc(t) bit for bit for finite |t| < 28 (other lanes:
// unspecified; callers exclude them). All four ranges are evaluated in
// every lane with the coefficients picked per lane, and the finishing
// formula of each range is blended in.
func goErfc(t V) V {
	Comment("erfc")
	// Masks are recomputed where they are used: there are only 7 opmask
	// registers for all U chains.
	ax := absV(t)
	ge := func(v float64) K_ { return cmp(cmpGE, ax, c(v)) }
	neg := func() K_ { return cmp(cmpLT, t, c(0)) }
	idx := copyV(ci(0)) // the range, 0 to 3
	for _, lo := range []float64{0.84375, 1.25, 1 / 0.35} {
		m := ge(lo)
		for i := range idx {
			VPADDQ(ci(1), idx[i], m[i], idx[i])
		}
	}
	sq := mul(ax, ax)
	v := blend(ge(0.84375), sq, sub(ax, c(1))) // z = x² or s = x − 1
	v = blend(ge(1.25), v, div(c(1), sq))      // s = 1/x²
	num := permTable8(rowMem(erfcNum[0]), idx)
	for _, r := range erfcNum[1:] {
		num = add(permTable8(rowMem(r), idx), mul(v, num))
	}
	den := permTable8(rowMem(erfcDen[0]), idx)
	for _, r := range erfcDen[1:] {
		den = add(permTable8(rowMem(r), idx), mul(v, den))
	}
	den = add(c(1), mul(v, den))
	y := div(num, den)

	// [0, 0.84375): temp = x + x·y below 1/4, else 0.5 + (x·y + (x − 0.5)).
	xy := mul(ax, y)
	temp := blend(cmp(cmpLT, ax, c(0.25)), add(c(0.5), add(xy, sub(ax, c(0.5)))), add(ax, xy))
	resA := blend(neg(), sub(c(1), temp), add(c(1), temp))
	// [0.84375, 1.25): 1 − erx − P/Q, or 1 + erx + P/Q for negative t.
	resB := blend(neg(), sub(c(1-erx), y), add(c(1+erx), y))
	res := blend(ge(0.84375), resA, resB)
	// [1.25, 28): e^(−z²−0.5625)·e^((z−x)(z+x) + R/S)/x, z = x with the low
	// 32 bits cleared; 2 − that for negative t, and exactly 2 below −6.
	z := andV(ax, ci(0xffffffff00000000))
	e1 := goExp(sub(mul(negV(z), z), c(0.5625)))
	e2 := goExp(add(mul(sub(z, ax), add(z, ax)), y))
	q := div(mul(e1, e2), ax)
	negC := blend(cmp(cmpGT, ax, c(6)), sub(c(2), q), c(2))
	resC := blend(neg(), q, negC)
	return blend(ge(1.25), res, resC)
}

// twoSum returns s = a+b and its exact rounding error, as activation.twoSum.
func twoSum(a, b V) (s, e V) {
	s = add(a, b)
	bb := sub(s, a)
	return s, add(sub(a, sub(s, bb)), sub(b, bb))
}

// ddMulF returns the double-double (hi, lo)·x as activation.dd.mulF.
func ddMulF(hi, lo, x V) (V, V) {
	p := mul(hi, x)
	e := fms(hi, x, p)
	e = add(e, mul(lo, x))
	return twoSum(p, e)
}
