package main

// Exact GELU kernels in float32 lanes (16 per ZMM register with AVX-512, 8
// per YMM register with AVX2), each result within 1 ulp of the true value:
// the evaluation carries about 26 bits (error ≤ 2^−26 relative, before the
// final rounding). With z = |x| ≤ 13 and the tables of tables32.go (fit32.py):
//
//	e^{−z²/2} = 2^m · 2^{j/8} · e^r,   k = 8m + j = round(−z²/2 · 8/ln2),
//	  z² = sh + sl exactly (FMA), r = −z²/2 − k·ln2/8 = rh + rl with rh exact
//	  (ln2/8 split so that k·L1 is exact) and e^r = 1 + rh + τ;
//	Φ(−z) = e^{−z²/2}·G(z),  Φ(−z) − z·φ(z) = e^{−z²/2}·(z − z0)·K(z),
//	  G and K from 16 polynomials of degree 9, the last two Horner steps
//	  compensated (hi + lo pairs);
//	f(x)  = b + Y, Y = −z·Φ(−z),  b = x for x ≥ 0, −0 below;
//	f'(x) = b + Y, Y = ±e^{−z²/2}·(z − z0)·K(z) (− for x ≥ 0), b = 1 or −0;
//	f”(x) = e^{−z²/2}·(2 − z²)/√(2π).
//
// Y is a hi + lo pair scaled by 2^m last, so that it stays normal until then;
// b + Y is added with Fast2Sum (|Y| ≤ |b|/2 where b ≠ 0) and rounded once,
// and g·f^(k) is one FMA of g with that pair. Lanes the float32 evaluation
// does not cover — NaN, +Inf for f, x < −13 (f, f': results near float32's
// underflow), |x| > 13 (f”) — are exceptions, left to the caller's
// reference; x > 13 gives Y = 0 (f = x, f' = 1 exactly in float32).

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

const gelu32ZMax = 13

func gelu32Kernel(order int, avx512 bool) kernel32 {
	isa := "AVX2"
	if avx512 {
		isa = "AVX512"
	}
	name := fmt.Sprintf("GELULane32%sD%d", isa, order)
	return kernel32{
		name:  name,
		wide:  avx512,
		withG: order > 0,
		doc: []string{fmt.Sprintf("%s sets dst to (or, with add, adds) g·f^(%d)(x) for the exact GELU in float32 lanes", name, order),
			"(" + isa + "), within 1 ulp of the true value, except in lanes it leaves alone and reports. p is unused."},
		body: func(x V) (V, M) { return gelu32Body(order, x) },
	}
}

func gelu32Body(order int, x V) (V, M) {
	Comment(fmt.Sprintf("GELU f^(%d), float32 lanes", order))
	const signBit = 0x80000000
	ax := sand(x, csi(signBit-1))
	z := smin(ax, cs(gelu32ZMax))
	// The polynomial first: with AVX2 only 16 registers are usable, and the
	// exponential's values would be live across it.
	var ph, pl V
	if order < 2 {
		coef := gelu32G
		if order == 1 {
			coef = gelu32K
		}
		ph, pl = gelu32Poly(z, coef)
	}

	// e^{−z²/2} = 2^m · T_j · (1 + rh + τ)
	sh := smul(z, z)
	sl := sfms(z, z, sh)
	kf := sround(smul(sh, cs(-4/math.Ln2)), 0)
	rh := sfma(kf, cs(-float64(gelu32Ln2[0])), smul(sh, cs(-0.5)))
	rl := sfma(kf, cs(-float64(gelu32Ln2[1])), smul(sl, cs(-0.5)))
	ki := toInt(kf)
	q := sfma(sfma(sfma(rh, cs(1.0/120), cs(1.0/24)), rh, cs(1.0/6)), rh, cs(0.5))
	eh := smul(smul(rh, rh), q) // e^rh − 1 − rh
	tlo := sfma(smul(rl, rl), sfma(rl, cs(1.0/6), cs(0.5)), rl)
	tau := sfma(tlo, sadd(sadd(rh, cs(1)), eh), eh) // (1+rh+eh)(1+tlo) − 1 − rh
	exp2 := gelu32Exp2
	if order == 2 {
		exp2 = gelu32Exp2Phi
	}
	th, tl := table8(row16(exp2[0]), ki), table8(row16(exp2[1]), ki)

	var yh, yl V
	if order < 2 {
		if order == 0 {
			yh, yl = ddMulS(th, tl, ph, pl)
			nz := sxor(z, csi(signBit))
			p := smul(yh, nz)
			yl = sfma(yl, nz, sfms(yh, nz, p))
			yh = p
		} else {
			// D = copysign(z0, x) − x: z − z0 for x < 0, −(z − z0) above.
			sgn := sand(x, csi(signBit))
			xm := sxor(smin(x, cs(gelu32ZMax)), csi(signBit))
			dh, de := twoSumS(xm, sxor(sgn, cs(float64(gelu32Z0[0]))))
			dl := sadd(de, sxor(sgn, cs(float64(gelu32Z0[1]))))
			// Near the root dl is as large as dh, and ddMulS drops dl·pl:
			// renormalize (Fast2Sum: dh is 0 or a multiple of 2^−24 ≥ |dl|).
			dh, dl = fast2Sum(dh, dl)
			dph, dpl := ddMulS(dh, dl, ph, pl)
			yh, yl = ddMulS(th, tl, dph, dpl)
		}
	} else {
		two := sreg(cs(2))
		dh, de := twoSumS(two, sxor(sh, csi(signBit)))
		// Near √2, sl is a large part of 2 − z²: renormalize (Fast2Sum:
		// dh is 0 or a multiple of ulp(sh) > |sl|).
		dh, dl := fast2Sum(dh, ssub(de, sl))
		yh, yl = ddMulS(th, tl, dh, dl)
	}
	// · (1 + rh + τ)
	yl = sfma(yh, rh, sfma(yh, tau, sfma(yl, sadd(rh, tau), yl)))
	scale := sll(iadd(sra(ki, 3), csi(127)), 23) // 2^m, m = ⌊k/8⌋ ≥ −122
	yh, yl = scaleTail(order, x, gelu32ZMax, scale, yh, yl)
	hi, lo := addBase(order, x, yh, yl)
	var exc M
	switch order {
	case 0:
		exc = mor(scmp(cmpNGE, x, cs(-gelu32ZMax)), scmp(cmpEQ, x, cs(math.Inf(1))))
	case 1:
		exc = scmp(cmpNGE, x, cs(-gelu32ZMax))
	default:
		exc = scmp(cmpNLE, ax, cs(gelu32ZMax))
	}
	r := packHiLo(hi, lo)
	if order == 0 {
		// f has the sign of x; hi + lo would turn −0 + (+0) into +0 where
		// f(x) rounds to zero (x = −0 and the smallest negative subnormals).
		p := pending[r[0]]
		p.sign = sand(x, csi(signBit))
		pending[r[0]] = p
	}
	return r, exc
}

// hiLo is a result not yet rounded: the loop multiplies by g with one FMA,
// or adds the parts.
type hiLo struct{ hi, lo, sign V } // sign: nil, or a sign bit to give the result

var pending = map[VecVirtual]hiLo{}

// packHiLo returns hi as the result and remembers lo for the loop.
func packHiLo(hi, lo V) V {
	pending[hi[0]] = hiLo{hi: hi, lo: lo}
	return hi
}

// gelu32Poly evaluates the piecewise polynomial coef at z (0 ≤ z ≤ 13) as
// hi + lo, the last two Horner steps compensated.
func gelu32Poly(z V, coef [13][16]float32) (V, V) {
	const w = float64(gelu32ZMax) / 16
	iF := smin(sround(smul(z, cs(1/w)), 1), cs(15))
	ii := toInt(iF)
	var hi V
	if !wide {
		hi = sll(ii, 28)
	}
	row := func(r int) V { return table16(row16(coef[r]), ii, hi) }
	ctr := sfma(iF, cs(w), cs(w/2))
	u := ssub(z, ctr)
	// u is exact (Sterbenz) but for z < w/4 in interval 0, where ctr > z makes
	// this Fast2Sum's error term recover what was lost.
	ulo := ssub(z, sadd(u, ctr))
	q := row(12)
	for r := 11; r >= 6; r-- {
		q = sfma(q, u, row(r))
	}
	q2 := sfma(q, u, row(4)) // c2.hi + u·q; c2.lo joins the next step
	step := func(qh, ql V, ch, cl, extra V) (V, V) {
		m := smul(u, qh)
		me := sfms(u, qh, m)
		s := sadd(ch, m)
		se := sadd(ssub(ch, s), m) // Fast2Sum: |u·q| ≤ |c| (fit32.py checks)
		l := sadd(cl, me)
		if ql != nil {
			l = sfma(u, ql, l)
		}
		if extra != nil {
			l = sfma(u, extra, l)
		}
		return s, sadd(se, l)
	}
	q1h, q1l := step(q2, nil, row(2), row(3), row(5))
	ph, pl := step(q1h, q1l, row(0), row(1), nil)
	return ph, sfma(q1h, ulo, pl)
}

// scaleTail multiplies the pair Y = yh + yl by the power of two scale,
// zeroed for f and f' in lanes x > xmax (where the tail term is below half
// an ulp of the result: Y = 0 there).
func scaleTail(order int, x V, xmax float64, scale, yh, yl V) (V, V) {
	if order < 2 {
		scale = keepOnly(scmp(cmpLE, x, cs(xmax)), scale)
	}
	return smul(yh, scale), smul(yl, scale)
}

// addBase is the result as a hi + lo pair from the tail term Y = yh + yl
// of an x·σ-shaped activation: f = b + Y with b = x (f) or 1 (f') for
// x ≥ 0 and 0 for x < 0; f” = Y.
func addBase(order int, x, yh, yl V) (hi, lo V) {
	if order == 2 {
		return yh, yl
	}
	m := signOf(x)
	var base arg = x
	if order == 1 {
		base = cs(1)
	}
	b := sblend(m, base, csi(0x80000000)) // −0 for x < 0
	hi = sadd(b, yh)
	return hi, sadd(sadd(ssub(b, hi), yh), yl)
}
