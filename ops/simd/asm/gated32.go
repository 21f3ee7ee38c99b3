package main

// Sigmoid-gated kernels in float32 lanes (16 per ZMM register with AVX-512,
// 8 per YMM with AVX2): f(x) = x·σ(q(x)) with q = x·(c1 + c3·x²), for the
// tanh form of GELU (c1 = 2√(2/π), c3 = 0.044715·c1), its sigmoid form
// (c1 = 1.702) and SiLU (c1 = 1), each result within 1 ulp of the true
// value. The evaluation carries hi + lo pairs throughout (about 2^−40
// relative before the final rounding, but for the points below).
//
// f(−x) = f(x) − x, so everything is computed at z = |x| with q = q(z) ≥ 0,
// e = e^{−q}, d = 1 + e, R = 1/d, and with b = x, 1 for x ≥ 0 and −0 below:
//
//	f   = b − z·e·R
//	f'  = b ± e·R·(z·q'·R − 1)         (+ for x ≥ 0)
//	f”  = e·R²·(2(q' + 3c3·z²) − z·q'²·(1 − e)·R)
//
// e = 2^m·E, E = 2^{j/8}·e^r from the tables of tables32.go; the product
// is formed with E and scaled by 2^m last. Lanes left to the caller's
// reference: NaN, x < −XMax (q > 69: results near float32's underflow,
// where a subnormal part of a pair would lose half an ulp), and |x| > XMax
// for f” (f and f' there are x and 1 exactly: the scale is zeroed), +Inf
// for f, |x| < 2^−100 for f (products of subnormals), and a window of
// relative width 2^−10 around the roots of f' (x < 0) and f” (±), where the
// bracket cancels beyond what the pairs carry.

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
)

// gate32 is one activation of the family.
type gate32 struct {
	name   string  // kernel name prefix: "GELUTanh"
	c1, c3 float64 // q = x·(c1 + c3·x²)
}

var gates32 = []gate32{
	{"GELUTanh", 2 * math.Sqrt(2/math.Pi), 2 * math.Sqrt(2/math.Pi) * 0.044715},
	{"GELUSigmoid", 1.702, 0},
	{"SiLU", 1, 0},
}

// gatedQMax bounds q on the lanes computed here: e^{−69} > 2^−100, so
// every result and every part of a pair stays normal (a subnormal part
// would lose up to half an ulp, which a large g multiplies).
const gatedQMax = 69

// float64 models of the gate, for the constants only.
func (g gate32) q(z float64) float64  { return z * (g.c1 + g.c3*z*z) }
func (g gate32) q1(z float64) float64 { return g.c1 + 3*g.c3*z*z }

// xmax is the largest multiple of 1/16 with q ≤ gatedQMax.
func (g gate32) xmax() float64 {
	return math.Floor(16*bisect(func(z float64) float64 { return g.q(z) - gatedQMax }, 0, 200)) / 16
}

// root1 is z0 > 0 with f'(−z0) = 0: z·q'·R = 1.
func (g gate32) root1() float64 {
	return bisect(func(z float64) float64 { return z*g.q1(z)/(1+math.Exp(-g.q(z))) - 1 }, 0, 10)
}

// root2 is z0 > 0 with f”(±z0) = 0.
func (g gate32) root2() float64 {
	return bisect(func(z float64) float64 {
		q1 := g.q1(z)
		return 2*(q1+3*g.c3*z*z) - z*q1*q1*math.Tanh(g.q(z)/2)
	}, 0, 10)
}

// bisect finds a sign change of f in [a, b].
func bisect(f func(float64) float64, a, b float64) float64 {
	fa := f(a)
	for i := 0; i < 200; i++ {
		m := (a + b) / 2
		if (f(m) < 0) == (fa < 0) {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// split32 is v as float32 hi + lo.
func split32(v float64) (float64, float64) {
	h := float64(float32(v))
	return h, float64(float32(v - h))
}

func gated32Kernel(g gate32, order int, avx512 bool) kernel32 {
	isa := "AVX2"
	if avx512 {
		isa = "AVX512"
	}
	name := fmt.Sprintf("%sLane32%sD%d", g.name, isa, order)
	return kernel32{
		name:  name,
		wide:  avx512,
		withG: order > 0,
		doc: []string{fmt.Sprintf("%s sets dst to (or, with add, adds) g·f^(%d)(x) for x·σ(x·(%.6g + %.6g·x²)) in float32 lanes", name, order, g.c1, g.c3),
			"(" + isa + "), within 1 ulp of the true value, except in lanes it leaves alone and reports. p is unused."},
		body: func(x V) (V, M) { return gated32Body(g, order, x) },
	}
}

// ddAddS is a + b for hi + lo pairs (the low parts added, not renormalized).
func ddAddS(ah, al, bh, bl V) (V, V) {
	s, e := twoSumS(ah, bh)
	return s, sadd(e, sadd(al, bl))
}

// mulF is the pair a·(bh + bl) for a float32 a.
func mulF(a, bh, bl V) (V, V) {
	p := smul(a, bh)
	return p, sfma(a, bl, sfms(a, bh, p))
}

func gated32Body(g gate32, order int, x V) (V, M) {
	Comment(fmt.Sprintf("%s f^(%d), float32 lanes", g.name, order))
	const signBit = 0x80000000
	xmax := g.xmax()
	ax := sand(x, csi(signBit-1))
	z := smin(ax, cs(xmax))
	c1h, c1l := split32(g.c1)

	// q = z·v, v = c1 + c3·z², and q' = c1 + 3c3·z², as pairs. P = 3c3·z².
	sh := smul(z, z)
	var sl V
	var vh, vl, q1h, q1l, ph, pl, gh2, gl2 V
	c1hv := sreg(cs(c1h))
	if g.c3 == 0 {
		vh, vl = c1hv, sreg(cs(c1l))
		q1h, q1l = vh, vl
	} else {
		sl = sfms(z, z, sh)
		term := func(c float64) (V, V) { // c·z² as a pair
			h, l := split32(c)
			p := smul(sh, cs(h))
			pe := sfms(sh, sreg(cs(h)), p)
			return p, sfma(sh, cs(l), sfma(sl, cs(h), pe))
		}
		th, tl := term(g.c3)
		vh, vl = ddAddS(c1hv, sreg(cs(c1l)), th, tl)
		if order > 0 {
			ph, pl = term(3 * g.c3)
			q1h, q1l = ddAddS(c1hv, sreg(cs(c1l)), ph, pl)
		}
		if order == 2 { // 2(q' + P) now, so that P is not kept
			gh2, gl2 = ddAddS(q1h, q1l, ph, pl)
			gh2, gl2 = sadd(gh2, gh2), sadd(gl2, gl2)
		}
	}
	qh, ql := mulF(z, vh, vl)

	// e^{−q} = 2^m·E: k = round(−q·8/ln2), r = −q − k·ln2/8 = rh + rl
	// (rh exact: L1 has 14 bits and |q| < 128), e^r = 1 + rh + τ.
	kf := sround(smul(qh, cs(-8/math.Ln2)), 0)
	rh := sfnma(kf, cs(float64(gelu32Ln2[0])), sxor(qh, csi(signBit)))
	rl := sfnma(kf, cs(float64(gelu32Ln2[1])), sxor(ql, csi(signBit)))
	ki := toInt(kf)
	pq := sfma(sfma(sfma(sfma(rh, cs(1.0/720), cs(1.0/120)), rh, cs(1.0/24)), rh, cs(1.0/6)), rh, cs(0.5))
	eh := smul(smul(rh, rh), pq) // e^rh − 1 − rh
	tlo := sfma(smul(rl, rl), sfma(rl, cs(1.0/6), cs(0.5)), rl)
	tau := sfma(tlo, sadd(sadd(rh, cs(1)), eh), eh) // e^r − 1 − rh
	tjh, tjl := table8(row16(gelu32Exp2[0]), ki), table8(row16(gelu32Exp2[1]), ki)
	// E = (tjh + tjl)(1 + rh + τ) as a pair.
	p1 := smul(tjh, rh)
	p1e := sfms(tjh, rh, p1)
	Eh, Ee := fast2Sum(tjh, p1)
	El := sadd(sadd(sfma(tjh, tau, sfma(tjl, rh, tjl)), p1e), Ee)
	Eh, El = fast2Sum(Eh, El) // τ is up to 2^−10: renormalize

	// d = 1 + e with e = E·2^m, m = ⌊k/8⌋ ≥ −100.
	sd := sll(iadd(sra(ki, 3), csi(127)), 23)
	edh, edl := smul(Eh, sd), smul(El, sd)
	dh := sadd(edh, cs(1))
	dl := sadd(sadd(ssub(cs(1), dh), edh), edl)
	r0 := sop3(VDIVPS, sreg(cs(1)), dh)
	rho := sfnma(r0, dl, sfnma(r0, dh, cs(1)))
	Rh, Rl := r0, smul(r0, rho)

	var yh, yl V
	switch order {
	case 0:
		wh, wl := mulF(z, Rh, Rl)
		yh, yl = ddMulS(Eh, El, wh, wl)
	case 1:
		// A = z·q'·R − 1
		zh, zl := mulF(z, q1h, q1l)
		bh, bl := ddMulS(zh, zl, Rh, Rl)
		ah, ae := twoSumS(bh, cs(-1))
		ah, al := fast2Sum(ah, sadd(ae, bl))
		erh, erl := ddMulS(Eh, El, Rh, Rl)
		yh, yl = ddMulS(erh, erl, ah, al)
	default:
		// B = 2(q' + P) − z·q'²·(1 − e)·R
		var gh, gl V
		if g.c3 == 0 {
			gh, gl = sadd(q1h, q1h), sadd(q1l, q1l)
		} else {
			gh, gl = gh2, gl2
		}
		nh := ssub(cs(1), edh)
		nl := ssub(ssub(ssub(cs(1), nh), edh), edl)
		hh, hl := ddMulS(q1h, q1l, q1h, q1l)
		hh, hl = ddMulS(hh, hl, nh, nl)
		hh, hl = ddMulS(hh, hl, Rh, Rl)
		hh, hl = mulF(z, hh, hl)
		bh, be := twoSumS(gh, sxor(hh, csi(signBit)))
		bh, bl := fast2Sum(bh, sadd(be, ssub(gl, hl)))
		erh, erl := ddMulS(Eh, El, Rh, Rl)
		erh, erl = ddMulS(erh, erl, Rh, Rl)
		yh, yl = ddMulS(erh, erl, bh, bl)
	}

	// · 2^m
	yh, yl = scaleTail(order, x, xmax, sd, yh, yl)
	if order == 0 { // Y = −z·e·R ≤ 0
		yh, yl = sxor(yh, csi(signBit)), sxor(yl, csi(signBit))
	} else if order == 1 { // Y has the sign of x
		sgn := sand(x, csi(signBit))
		yh, yl = sxor(yh, sgn), sxor(yl, sgn)
	}
	hi, lo := addBase(order, x, yh, yl)

	var exc M
	switch order {
	case 0:
		exc = mor(scmp(cmpNGE, x, cs(-xmax)), scmp(cmpEQ, x, cs(math.Inf(1))))
		exc = mor(exc, scmp(cmpLT, ax, cs(0x1p-100)))
	case 1:
		r := g.root1()
		exc = mor(scmp(cmpNGE, x, cs(-xmax)), scmp(cmpLT, sand(sadd(x, cs(r)), csi(signBit-1)), cs(r*0x1p-10)))
	default:
		r := g.root2()
		exc = mor(scmp(cmpNLE, ax, cs(xmax)), scmp(cmpLT, sand(ssub(ax, cs(r)), csi(signBit-1)), cs(r*0x1p-10)))
	}
	return packHiLo(hi, lo), exc
}

// sfnma is −(a·b) + c rounded once.
func sfnma(a, b, cc arg) V { return f32.fmaLike(VFNMADD213PS, VFNMADD231PS, a, b, cc) }
