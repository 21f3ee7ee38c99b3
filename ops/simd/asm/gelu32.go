package main

// Exact GELU kernels in float32 lanes (16 per ZMM register with AVX-512,
// 8 per YMM register with AVX2), each result within 1 ulp of the true
// value. Plain float32 arithmetic but for a few exact products and the last
// sums: the error before the final rounding stays near 2^−26 relative
// because every term computed inexactly (ω, p, their product) is small, at
// most about a fifth, next to an exact main term T_j·F_i.
//
// With z = min(|x|, 13) and the tables of tables32.go (fit32.py):
//
//	e^{−z²/2} = 2^m·T_j·e^{τ_j}·e^r,  k = 16m + j = round(−z²/2·16/ln2)
//	  (8m + j and the 8-entry tables with AVX2); z² = s2 + s2l exactly,
//	  −2r = (s2 + 2k·L1) + (s2l + 2k·L2 − 2τ_j), the first part exact,
//	  e^r = 1 + p, p = r + c2·r² + c3·r³ (+ c4·r⁴);
//	Φ(−z)          = e^{−z²/2}·F_i·(1 + ω_i(v))             (f)
//	Φ(−z) − z·φ(z) = e^{−z²/2}·(β_i − z)·F_i·(1 + ω_i(v))   (f')
//	  F_i and the polynomial ω_i of the interval i of z (v = z − c_i, exact),
//	  β_i − z as dh + dl (Fast2Sum: exact where β = z0, the root of f');
//	Y = 2^m·(P + c) with P = T_j·F_i rounded and c = P·ε + (T_j·F_i − P),
//	  ε = ω + p·(1 + ω), so that Y = 2^m·T_j·F_i·(1 + p)(1 + ω) (times D for
//	  f'), renormalized (but for the AVX-512 f, see gelu32Body);
//	f(x) = x·(b + s·Y), f'(x) = b + s·Y with b = 1, s = −1 for x ≥ 0 (1 − Y
//	  as a Fast2Sum pair) and b = 0, s = 1 below, rounded once at the end;
//	f”(x) = 2^m·T'_j·(1 + p)·(2 − z²), T' = 2^{j/16}/√(2π), 2 − z² a pair.
//
// Lanes the float32 evaluation does not cover — NaN, +Inf for f, x < −12.6875
// for f (Φ(x) < 2^−122: the pair's lo part would be subnormal), x < −13 for
// f' (results near float32's underflow), |x| > 13 for f” — are exceptions,
// left to the caller's reference; x > 13 gives Y < 2^−120, so f = x and
// f' = 1 exactly.

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

const gelu32ZMax = 13

// gelu32Unroll is the number of chains per iteration of the AVX-512 kernels
// for f, f', f”: f” has the shortest body and gains from a third chain;
// f and f' do not (measured: they are bound by their operation count).
var gelu32Unroll = [3]int{2, 2, 3}

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

// gelu32Set is the tables of one instruction set: AVX-512 looks up 32
// intervals with one VPERMT2PS and 16 exponential entries with one
// VPERMPS; AVX2 needs two VPERMPS and a blend for 16 entries, so it takes
// 16 intervals (higher degrees) and 8 exponential entries.
type gelu32Set struct {
	mbits    int         // mantissa bits of the interval index
	q, d     [][]float32 // rows c, F, a1 .. ad (and β.hi, β.lo for d)
	exp, phi [2][16]float32
	expm1    []float32 // c2, c3, ...
	ln2      [2]float32
	expShift uint8 // log2 of the exponential's entries
}

func gelu32Tables() gelu32Set {
	if wide {
		return gelu32Set{3, rowsOf(gelu32Q32[:]), rowsOf(gelu32D32[:]), gelu32Exp16, gelu32Exp16Phi,
			gelu32Expm1x16[:], gelu32Ln2x16, 4}
	}
	return gelu32Set{2, rowsOf(gelu32Q16[:]), rowsOf(gelu32D16[:]), gelu32Exp8, gelu32Exp8Phi,
		gelu32Expm1x8[:], gelu32Ln2, 3}
}

func rowsOf[R [32]float32 | [16]float32](t []R) [][]float32 {
	out := make([][]float32, len(t))
	for i, r := range t {
		switch r := any(r).(type) {
		case [32]float32:
			out[i] = r[:]
		case [16]float32:
			out[i] = r[:]
		}
	}
	return out
}

// gelu32Exp is e^{−z²/2} = 2^m·T_j·(1 + p), with z² = s2 + s2l exactly and
// kt holding k in its low bits.
type gelu32Exp struct{ s2, s2l, kt, kf, th, p V }

// expNeg works with R = −2r = z² + 2k·ln2/n − 2τ_j (so that no −z²/2 is
// formed): u = s2 + 2k·L1 is exact (k·L1 has at most 24 bits and |u| <
// 2^−3), and p = e^{−R/2} − 1 = R·(−1/2 + R·(c2/4 − R·c3/8 + …)).
func (s gelu32Set) expNeg(z V, tab [2][16]float32) gelu32Exp {
	const magic = 0x1.8p23 // kt = magic + k: k in the low mantissa bits
	n := float64(int(1) << s.expShift)
	var e gelu32Exp
	e.s2 = smul(z, z)
	e.s2l = sfms(z, z, e.s2)
	e.kt = sfma(e.s2, cs(-n/(2*math.Ln2)), cs(magic))
	e.kf = ssub(e.kt, cs(magic))
	u := sfma(e.kf, cs(2*float64(s.ln2[0])), e.s2)
	tau2 := rowScaled(tab[1], -2) // −2τ_j
	v := sfmaTo(e.kf, cs(2*float64(s.ln2[1])), sadd(e.s2l, table8(row16(tau2), e.kt)))
	R := sadd(u, v)
	// Horner in R for (p/R + 1/2)/R: c2/4, −c3/8, c4/16, …
	c := func(i int) float64 { return float64(s.expm1[i]) * math.Pow(-0.5, float64(i+2)) }
	last := len(s.expm1) - 1
	q := sfma(R, cs(c(last)), cs(c(last-1)))
	for i := last - 2; i >= 0; i-- {
		q = sfmaTo(q, R, sreg(cs(c(i))))
	}
	e.p = smul(R, sfma(R, q, cs(-0.5)))
	e.th = table8(row16(tab[0]), e.kt)
	return e
}

// rowScaled is row·f (f a power of two: exact).
func rowScaled(row [16]float32, f float32) [16]float32 {
	for i := range row {
		row[i] *= f
	}
	return row
}

// scale multiplies a by 2^m, m = ⌊k/n⌋.
func (s gelu32Set) scale(e gelu32Exp, a ...V) []V {
	var f V
	if wide {
		f = smul(e.kf, cs(1/float64(int(1)<<s.expShift)))
	} else {
		// bits(kt) = bits(magic) + k; (k >> shift) + 127 in the exponent
		// field (the magic's bits above the shift vanish under << 23).
		f = sll(iadd(sra(e.kt, s.expShift), csi(127)), 23)
	}
	out := make([]V, len(a))
	for i, v := range a {
		if wide {
			out[i] = scalefS(v, f)
		} else {
			out[i] = smul(v, f)
		}
	}
	return out
}

func gelu32Body(order int, x V) (V, M) {
	Comment(fmt.Sprintf("GELU f^(%d), float32 lanes", order))
	const signBit = 0x80000000
	s := gelu32Tables()
	ax := sand(x, csi(signBit-1))
	z := smin(ax, cs(gelu32ZMax))
	if order == 2 {
		return gelu32D2(s, ax, z)
	}

	// The order keeps few values live: with AVX2 (16 registers) the
	// interval's polynomial comes before the exponential, with AVX-512
	// (three chains) after it, so that p is consumed as soon as ω is known.
	var e gelu32Exp
	if wide {
		e = s.expNeg(z, s.exp)
	}
	rows := s.q
	if order == 1 {
		rows = s.d
	}
	idx := srl(sadd(z, cs(1)), uint8(23-s.mbits))
	var upper V // AVX2: the lanes whose index is 8 or more (bit 3 in the sign)
	if !wide {
		upper = sll(idx, 28)
	}
	lookup := func(r int) V {
		if wide {
			return table32(row32(rows[r]), idx)
		}
		return table16(row16([16]float32(rows[r])), idx, upper)
	}
	deg := len(rows) - 2
	if order == 1 {
		deg -= 2
	}
	v := ssub(z, lookup(0))
	S := lookup(deg + 1)
	for k := deg; k >= 2; k-- {
		S = sfmaTo(S, v, lookup(k))
	}
	if !wide {
		e = s.expNeg(z, s.exp)
	}
	// ε = ω + p·(1 + ω): for f', v·S·(1 + p) + p with S·(1 + p) rounded,
	// an error of 2^−24·|ω| (|ω| ≤ 0.04); for f, whose ω is larger, the
	// products with p rounded instead (errors of 2^−24·|p|).
	var eps V
	if order == 1 {
		eps = sfma(v, sfmaTo(S, e.p, S), e.p)
	} else {
		eps = sfma(v, S, smul(e.p, sfma(v, S, cs(1))))
	}
	fi := lookup(1)
	ph := smul(e.th, fi)
	c := sfmaTo(ph, eps, sfms(e.th, fi, ph))
	if order == 1 {
		// D = β − z = dh + dl (Fast2Sum: exact where z ≥ β/2, and |β| ≥ z
		// below), with β.lo added, renormalized: at the root dh is 0 or a
		// few ulp of z, and D·P must be an exact product plus small terms
		// there too, or g·D·P rounds beyond an ulp for g other than 1. z0's
		// third part is added everywhere (below 2^−50 of D where β = 0.75).
		beta := lookup(deg + 2)
		dh := ssub(beta, z)
		dh, dl := fast2Sum(dh, sadd(ssub(ssub(beta, dh), z), lookup(deg+3)))
		dl = sadd(dl, cs(gelu32Z0Rest))
		yh := smul(dh, ph)
		c = sfmaTo(dl, ph, sfmaTo(dh, c, sfms(dh, ph, yh)))
		ph = yh
	}
	// c is up to a fifth of ph. The AVX2 f renormalizes the pair, so that
	// x·lo stays below half an ulp of f where that is subnormal (a tiny x);
	// the AVX-512 f needs not (its first interval is expanded at 0, so c is
	// tiny there too), nor do f' and f”, where the loop multiplies by the
	// mantissa of g.
	var y []V
	if order == 0 && !wide {
		y = s.scale(e, fast2SumV(ph, c)...)
	} else {
		y = s.scale(e, ph, c)
	}

	// b + s·Y: for x ≥ 0, 1 − Y as a pair (Fast2Sum: Y ≤ 1/2).
	var hi, lo V
	if wide {
		pos := scmp(cmpGE, x, cs(0))
		one := sreg(cs(1))
		hi = subWhere(pos, y[0], one, y[0])
		lo = subWhere(pos, y[1], ssub(ssub(one, hi), y[0]), y[1])
	} else {
		hp := ssub(cs(1), y[0])
		lp := ssub(ssub(ssub(cs(1), hp), y[0]), y[1])
		neg := signOf(x)
		hi, lo = sblend(neg, hp, y[0]), sblend(neg, lp, y[1])
	}
	if order == 1 {
		return packHiLo(hi, lo), scmp(cmpNGE, x, cs(-gelu32ZMax))
	}
	// f = x·(hi + lo), rounded once. Its sign is x's: with AVX2, −0·lo may
	// be +0 and is given x's sign; with AVX-512, lo is +0 at z = 0 (the
	// first interval is expanded there: ω = p = c = +0), so f(−0) = −0.
	f := sfma(x, hi, smul(x, lo))
	if !wide {
		f = orSignOf(f, x)
	}
	exc := outside(x, -gelu32XMaxF, math.Inf(1))
	pending[f[0]] = hiLo{hi: f}
	return f, exc
}

// gelu32D2 is f” = e^{−z²/2}·(2 − z²)/√(2π) = 2^m·T'_j·(1 + p)·W, W = 2 − z²
// as a pair.
func gelu32D2(s gelu32Set, ax, z V) (V, M) {
	e := s.expNeg(z, s.phi)
	// W = 2 − s2 − s2l: the difference 2 − s2 with its error (Knuth's
	// TwoSum, as a difference), then s2l.
	wh := ssub(cs(2), e.s2)
	bb := ssub(wh, cs(2))
	we := ssub(ssub(cs(2), ssub(wh, bb)), sadd(e.s2, bb))
	// Near √2, s2l is a large part of W: renormalize (Fast2Sum: wh is 0 or
	// a multiple of ulp(s2)/2 ≥ |s2l|).
	wh, wl := fast2Sum(wh, ssub(we, e.s2l))
	yh := smul(e.th, wh)
	yl := sfmaTo(e.th, sfmaTo(wh, e.p, wl), sfms(e.th, wh, yh))
	y := s.scale(e, yh, yl)
	return packHiLo(y[0], y[1]), scmp(cmpNLE, ax, cs(gelu32ZMax))
}

// fast2SumV is fast2Sum's pair as a slice.
func fast2SumV(a, b V) []V {
	h, l := fast2Sum(a, b)
	return []V{h, l}
}

// hiLo is a result not yet rounded: the loop multiplies by g with one FMA,
// or adds the parts. With lo nil, hi is the final result.
type hiLo struct{ hi, lo, sign V } // sign: nil, or a sign bit to give the result

var pending = map[VecVirtual]hiLo{}

// packHiLo returns hi as the result and remembers lo for the loop.
func packHiLo(hi, lo V) V {
	pending[hi[0]] = hiLo{hi: hi, lo: lo}
	return hi
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
