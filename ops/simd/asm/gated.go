package main

// Kernels of the sigmoid-gated family f(x) = x·σ(q(x)): the tanh form of
// GELU (q = 2c·(x + a·x³)) and the linear gates q = β·x (GELU's sigmoid
// form, SiLU, the sigmoid-gated unit). float64: activation.gatedF and gatedD1 with
// tanhGate or linearGate repeated operation by operation; lanes with
// |x| > p[4] or NaN are left to the Go caller. float32: float64 lanes,
// rounded once.

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

// Parameters of the float64 gated kernels.
const (
	qpC0Hi   = iota // linear: β (hi, lo); tanh: the cubic coefficient a (hi, lo)
	qpC0Lo          //
	qpC1Hi          // tanh: 2·√(2/π) (hi, lo)
	qpC1Lo          //
	qpXMax          // lanes with |x| > XMax are exceptions (then |q| ≤ 700)
	qpCubic3        // tanh: 3·a.hi, as ops computes it
)

type gateFn func(x V) (qh, ql, q1 V)

// linearGate64 is activation.linearGate: q = β·x in double-double, q' = β.hi.
func linearGate64(p GPVirtual) gateFn {
	bh, bl := param(p, qpC0Hi), param(p, qpC0Lo)
	return func(x V) (V, V, V) {
		qh, ql := ddMulF(bh, bl, x)
		return qh, ql, bh
	}
}

// tanhGate64 is activation.tanhGate: q = 2c·(x + a·x³) carried in double-double.
func tanhGate64(p GPVirtual) gateFn {
	ah, al := param(p, qpC0Hi), param(p, qpC0Lo)
	sh, sl := param(p, qpC1Hi), param(p, qpC1Lo)
	a3 := param(p, qpCubic3)
	return func(x V) (V, V, V) {
		Comment("tanh gate")
		sq := mul(x, x)
		sqErr := fms(x, x, sq)
		axh, axl := ddMulF(ah, al, sq)
		axl = add(axl, mul(ah, sqErr))
		one := copyV(c(1))
		u, uErr := twoSum(one, axh)
		uErr = add(uErr, axl)
		v := mul(x, u)
		vErr := fms(x, u, v)
		vErr = add(vErr, mul(x, uErr))
		qh, ql := ddMulF(sh, sl, v)
		ql = add(ql, mul(sh, vErr))
		q1 := mul(sh, add(c(1), mul(a3, sq)))
		return qh, ql, q1
	}
}

func gatedExact64(name string, gate func(GPVirtual) gateFn, order int) kernel {
	return kernel{
		name:  fmt.Sprintf("%s64D%d", name, order),
		withG: order > 0,
		doc: []string{fmt.Sprintf("%s64D%d sets dst to (or, with add, adds) g·f^(%d)(x), bit-identical to the scalar", name, order, order),
			"reference, except in lanes with |x| > p[4] or NaN, which it leaves alone and reports."},
		setup: func(p GPVirtual) body {
			g := gate(p)
			xmax := param(p, qpXMax)
			return func(x V) (V, V, K_) {
				exc := func() K_ { return cmp(cmpNLE, absV(x), xmax) }
				qh, ql, q1 := g(x)
				e := goExp(negV(absV(qh))) // exp(−q) for q ≥ 0, exp(q) below
				d := add(e, c(1))
				pos := func() K_ { return cmp(cmpGE, qh, c(0)) }
				l1 := add(ql, c(1))
				if order == 0 {
					// q ≥ 0: x/(1+e);  q < 0: e·((1+lo)·(x/(1+e))).
					xd := div(x, d)
					return blend(pos(), mul(e, mul(l1, xd)), xd), nil, exc()
				}
				// q ≥ 0: 1/d + ((x·q')·e)/(d·d);
				// q < 0: e·((1+lo)·((1 + (x·q')/d)/d)).
				xq := mul(x, q1)
				r1 := div(blend(pos(), xq, c(1)), d)
				r2 := div(blend(pos(), add(r1, c(1)), mul(xq, e)), blend(pos(), d, mul(d, d)))
				return blend(pos(), mul(e, mul(l1, r2)), add(r1, r2)), nil, exc()
			}
		},
	}
}

// Parameters of the float32 gated kernels: q = x·(c1 + c3·x²).
const (
	fpC1 = iota
	fpC3
)

// gatedFast32 evaluates in float64 lanes, with s = σ(q) from e = exp(−|q|)
// (s = 1/(1+e) for q ≥ 0, e/(1+e) below), and stores the float32 rounding
// only where it is certain to equal the rounding of the float64 reference
// (see certain); the Go caller computes the other lanes. With T the sum of
// the terms' magnitudes, to which the error (about |q|·2^−52) is relative:
//
//	f = x·s,  f' = s + x·q'·s(1−s),  f'' = s(1−s)·(2q' + x(1−2s)q'² + x·q'').
//
// x is clamped to ±MaxFloat32 (so −Inf gives −0 and every product stays
// finite) and −|q| to −746, below which e is 0 and s(1−s) vanishes.
func gatedFast32(order int) kernel {
	return kernel{
		name:  fmt.Sprintf("GatedFast32D%d", order),
		f32:   true,
		withG: order > 0,
		doc: []string{fmt.Sprintf("GatedFast32D%d sets dst to (or, with add, adds) g·f^(%d)(x) for x·σ(x·(p[0] + p[1]·x²))", order, order),
			"in float32, equal to the float64 reference rounded, except in lanes it leaves alone and reports."},
		setup: func(p GPVirtual) body {
			c1, c3 := param(p, fpC1), param(p, fpC3)
			var c3x3, c3x6 V
			if order > 0 {
				c3x3 = mul(c3, c(3))
			}
			if order > 1 {
				c3x6 = mul(c3, c(6))
			}
			return func(x V) (V, V, K_) {
				xl := maxV(c(-0x1.fffffep127), x)
				xc := minV(c(0x1.fffffep127), xl)
				x2 := mul(xc, xc)
				q := mul(xc, fma(c3, x2, c1))
				aq := maxV(c(-746), orV(q, ci(1<<63))) // −|q|
				e := fastExp(aq)
				d := add(e, c(1))
				rd := div(c(1), d)
				er := mul(e, rd)
				pos := cmp(cmpGE, q, c(0))
				s := blend(pos, er, rd)
				if order == 0 {
					f := mul(xl, s)
					return f, f, nil
				}
				sm := mul(er, rd) // s(1−s)
				q1 := fma(c3x3, x2, c1)
				if order == 1 {
					t := mul(mul(xc, sm), q1)
					return add(s, t), add(s, absV(t)), nil
				}
				om := sub(blend(pos, rd, er), s) // 1 − 2s
				q2 := mul(c3x6, xc)
				t1, t2, t3 := mul(q1, c(2)), mul(mul(xc, om), mul(q1, q1)), mul(xc, q2)
				b := add(add(t1, t2), t3)
				scale := add(add(absV(t1), absV(t2)), absV(t3))
				return mul(sm, b), mul(sm, scale), nil
			}
		},
	}
}
