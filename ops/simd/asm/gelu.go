package main

// GELU kernels. float64: the scalar reference (activation.geluF, geluD1, geluD2
// with NormalCDF and phiMul) repeated operation by operation, so the results
// are bit-identical; lanes with |x| > 37 or NaN (the Mills-ratio tail, the
// split exponential, the special cases) are left to the Go caller.
// float32: a faster evaluation in float64 lanes, rounded once.

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Parameters of the float64 GELU kernels (p[i]), filled in by package activation
// from its own constants so both sides use the same bits.
const (
	gpNegInvSqrt2Hi = iota // −1/√2 as a double-double
	gpNegInvSqrt2Lo
	gpInvSqrtPi  // 1/√π
	gpInvSqrt2Pi // 1/√(2π)
	gpXMax       // lanes with |x| > XMax are exceptions
)

type geluConsts struct{ nh, nl, isp, is2p, xmax V }

func loadGELUConsts(p GPVirtual) geluConsts {
	return geluConsts{param(p, gpNegInvSqrt2Hi), param(p, gpNegInvSqrt2Lo),
		param(p, gpInvSqrtPi), param(p, gpInvSqrt2Pi), param(p, gpXMax)}
}

// normalCDF is activation.NormalCDF for |x| ≤ 37:
// 0.5·erfc(t.hi) − t.lo·(1/√π)·exp(−t.hi²), t = (−1/√2)·x in double-double.
func (k geluConsts) normalCDF(x V) V {
	th, tl := ddMulF(k.nh, k.nl, x)
	corr := mul(mul(tl, k.isp), goExp(mul(negV(th), th)))
	return sub(mul(c(0.5), goErfc(th)), corr)
}

// phiMul is activation.phiMul for |x| ≤ 37: exp(−x²/2)·((1 + lo)·(m/√(2π))) with
// x² = sq + sqErr exactly.
func (k geluConsts) phiMul(x, m V) V {
	sq := mul(x, x)
	sqErr := fms(x, x, sq)
	e := goExp(mul(sq, c(-0.5)))
	return mul(e, mul(add(mul(sqErr, c(-0.5)), c(1)), mul(m, k.is2p)))
}

func geluExact64(order int) kernel {
	return kernel{
		name:  fmt.Sprintf("GELUExact64D%d", order),
		withG: order > 0,
		doc: []string{fmt.Sprintf("GELUExact64D%d sets dst to (or, with add, adds) g·f^(%d)(x) for the exact GELU, bit-identical to", order, order),
			"the scalar reference, except in lanes with |x| > p[4] or NaN, which it leaves alone and reports."},
		setup: func(p GPVirtual) body {
			k := loadGELUConsts(p)
			return func(x V) (V, V, K_) {
				var f V
				switch order {
				case 0:
					f = mul(x, k.normalCDF(x))
				case 1:
					f = add(k.normalCDF(x), k.phiMul(x, x))
				default:
					f = k.phiMul(x, fnma(x, x, c(2)))
				}
				return f, nil, cmp(cmpNLE, absV(x), k.xmax)
			}
		},
	}
}

// geluFast32 evaluates in float64 lanes with a relative error of about
// 2^−43 (relative to |Φ| + |x·φ| for f'), and stores the float32 rounding
// only where it is certain to equal the rounding of the float64 reference
// (see certain); the Go caller computes the other lanes with the reference.
// With z = |x|, e = e^{−z²/2} and φ = e/√(2π):
//
//	Φ(−z) = e·G(z),  G(z) = e^{z²/2}·(1 − Φ(z)) from 16 polynomial pieces;
//	Φ(x) = Φ(−z) for x < 0, 1 − Φ(−z) otherwise;
//	f = x·Φ(x),  f' = Φ(x) + x·φ,  f'' = (2 − x²)·φ.
//
// G's argument is clamped to 21, beyond which Φ(−z) and φ are below 1e−96,
// too small to matter in float32 even times g = MaxFloat32; e is computed
// from the unclamped z (its argument clamped to −746), so it reaches 0
// where the float64 reference underflows. x is clamped to ±MaxFloat32 where
// it multiplies (so −Inf gives −0 and no product is Inf·0), keeping NaN.
func geluFast32(order int) kernel {
	return kernel{
		name:  fmt.Sprintf("GELUFast32D%d", order),
		f32:   true,
		withG: order > 0,
		doc: []string{fmt.Sprintf("GELUFast32D%d sets dst to (or, with add, adds) g·f^(%d)(x) for the exact GELU in float32,", order, order),
			"equal to the float64 reference rounded, except in lanes it leaves alone and reports. p is unused."},
		setup: func(GPVirtual) body {
			rows := gRows()
			magic := reg(c(0x1.8p52))
			return func(x V) (V, V, K_) {
				ax := absV(x)
				e := fastExp(maxV(c(-746), mul(mul(ax, ax), c(-0.5))))
				phi := mul(e, gPoly(rows, minV(c(gMax), ax), magic)) // Φ(−z)
				cdf := blend(signMask(x), sub(c(1), phi), phi)
				xl := maxV(c(-0x1.fffffep127), x)
				if order == 0 {
					f := mul(xl, cdf)
					return f, f, nil
				}
				xc := minV(c(0x1.fffffep127), xl)
				if order == 1 {
					// Φ + x·φ cancels near the minimum: scale |Φ| + |x·φ|.
					xphi := mul(mul(xc, e), c(1/math.Sqrt(2*math.Pi)))
					return add(cdf, xphi), add(cdf, absV(xphi)), nil
				}
				// 2 − x² is exact for float32 x: no cancellation error.
				f := mul(fnma(xc, xc, c(2)), mul(e, c(1/math.Sqrt(2*math.Pi))))
				return f, f, nil
			}
		},
	}
}

// gPoly evaluates the piece of G for min(⌊z⌋, 15) at u = z − min(⌊z⌋, 15)
// (0 ≤ z ≤ gMax).
func gPoly(rows [gDegree + 1]Mem, z, magic V) V {
	t := newV()
	for i := range t {
		VADDPD_RD_SAE(magic[i], z[i], t[i]) // ⌊z⌋ + 1.5·2^52: the low bits hold ⌊z⌋
	}
	t = minV(c(0x1.8p52+gIntervals-1), t)
	u := sub(z, sub(t, magic))
	h := permTable16(rows[gDegree], t)
	for k := gDegree - 1; k >= 0; k-- {
		h = fma(h, u, permTable16(rows[k], t))
	}
	return h
}

var gRowsMem *[gDegree + 1]Mem

// gRows emits the G tables once and returns them.
func gRows() [gDegree + 1]Mem {
	if gRowsMem == nil {
		r := gTable()
		gRowsMem = &r
	}
	return *gRowsMem
}
