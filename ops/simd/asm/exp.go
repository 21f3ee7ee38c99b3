package main

import (
	"math"
	"math/big"

	. "github.com/mmcloughlin/avo/operand"
)

// goExp returns math.Exp(x) bit for bit, for x in [−708, 709]: it repeats,
// lane by lane, the operations of the FMA path of the Go runtime's
// math.Exp on amd64 (src/math/exp_amd64.s, after Shibata's SLEEF method),
// which is the path every AVX-512 CPU takes. Outside that range the
// assembly has special cases (overflow, subnormal results) this does not
// repeat; callers exclude those lanes.
func goExp(x V) V {
	// The constants are the decimal literals of exp_amd64.s, rounded to
	// float64 by the Go compiler as the assembler rounds them.
	const (
		log2e = 1.4426950408889634073599246810018920
		ln2U  = 0.69314718055966295651160180568695068359375
		ln2L  = 0.28235290563031577122588448175013436025525412068e-12
	)
	taylor := []float64{ // 1/8!, 1/7!, ..., 1/3!, 1/2, 1
		2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
		8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1,
		0.5, 1.0,
	}
	t := mul(x, c(log2e))
	k := roundEven(t) // CVTSD2SL; CVTSL2SD
	r := fnma(k, c(ln2U), x)
	r = fnma(k, c(ln2L), r)
	r = mul(r, c(0.0625))
	p := fma(c(taylor[0]), r, c(taylor[1]))
	for _, tc := range taylor[2:] {
		p = fma(p, r, c(tc))
	}
	y := mul(r, p)
	for i := 0; i < 3; i++ { // e^(2a) − 1 = y·(y+2), three times
		y = mul(y, add(y, c(2)))
	}
	y = fma(y, add(y, c(2)), c(1)) // the fourth doubling, plus 1
	return scalef(y, k)
}

// fastExp returns e^a for a ≤ 0 (a ≥ −746, below which e^a is 0 in float64)
// with a relative error below 2^−49: a = (16m + j)·ln2/16 + r with
// |r| ≤ ln2/32 (ln2/16 split in two doubles, so r is exact to ~2^−100),
// e^a = 2^m · 2^(j/16) · p(r), the 16 powers 2^(j/16) from a table and p
// the degree-6 Taylor polynomial (error < r^7/7! < 2^−51), plus a few
// roundings. VSCALEFPD applies 2^m with correct rounding into the
// subnormal range.
func fastExp(a V) V {
	const magic = 0x1.8p52 // adding it rounds to an integer, kept in the low bits
	t := fma(a, c(16/math.Ln2), c(magic))
	kd := sub(t, c(magic)) // k = 16m + j
	l1, l2 := ln2Over16()
	r := fnma(kd, c(l1), a)
	r = fnma(kd, c(l2), r)
	p := fma(c(1.0/720), r, c(1.0/120))
	p = fma(p, r, c(1.0/24))
	p = fma(p, r, c(1.0/6))
	p = fma(p, r, c(0.5))
	p = fma(p, r, c(1))
	p = fma(p, r, c(1))
	// VPERMT2PD reads the low 4 bits of t's bit pattern: j = k mod 16.
	p = mul(p, permTable16(exp2Table(), t))
	return scalef(p, mul(kd, c(1.0/16))) // scalef floors: 2^m with m = ⌊k/16⌋
}

var exp2Mem *Mem

// exp2Table is 2^(j/16), j = 0..15, each correctly rounded.
func exp2Table() Mem {
	if exp2Mem == nil {
		var w [16]uint64
		for j := range w {
			w[j] = math.Float64bits(pow2Frac(j))
		}
		m := consts.vec8([8]uint64(w[:8]))
		consts.vec8([8]uint64(w[8:]))
		exp2Mem = &m
	}
	return *exp2Mem
}

// ln2Over16 returns ln2/16 as hi + lo, from ln 2 to 36 digits.
func ln2Over16() (hi, lo float64) {
	v, _, err := big.ParseFloat("0.693147180559945309417232121458176568", 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	v.Quo(v, bf(16))
	hi, _ = v.Float64()
	lo, _ = v.Sub(v, bf(hi)).Float64()
	return hi, lo
}
