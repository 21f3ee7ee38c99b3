package main

// The loop of the float32-lane kernels: L·U elements per iteration (L = 16
// with AVX-512, 8 with AVX2), the tail masked (masked loads do not fault on
// masked-off lanes), and lanes the body marks as exceptions left unwritten
// for the Go caller: their bits go to exc, L/8 bytes per chain (it must hold
// (L/8)·U·⌈len(x)/(L·U)⌉ bytes: simd.Bitmap does for a Block). The body
// returns its result as a hi + lo pair (packHiLo): the loop computes
// g·(hi + lo) with one FMA, so the product is rounded once.

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

type kernel32 struct {
	name   string
	wide   bool
	unroll int
	withG  bool
	doc    []string
	body   func(x V) (V, M)
}

func (k kernel32) generate() {
	U, wide = k.unroll, k.wide
	L := lanes()
	dst, xp, gp := kernelHeader(k.name, "float32", k.doc, k.withG)
	n, addFlag, excp := GP64(), GP8(), GP64()
	Load(Param("x").Len(), n)
	Load(Param("add"), addFlag)
	Load(Param("exc").Base(), excp)
	anyExc := GP32()
	XORL(anyExc, anyExc)
	var full GPVirtual
	var iota Mem
	if wide {
		full = GP32()
		MOVL(U32(0xFFFF), full)
	} else {
		var w [8]uint64
		for i := range w {
			w[i] = uint64(2*i) | uint64(2*i+1)<<32
		}
		iota = consts.vec8(w)
	}

	loop, done := k.name+"_loop", k.name+"_done"
	Label(loop)
	TESTQ(n, n)
	JZ(LabelRef(done))
	// Chain i covers elements [L·i, L·i + L) of this iteration; its mask has
	// min(max(n − L·i, 0), L) lanes.
	active := make(M, U)
	chainCounts(n, L, func(i int, cnt GPVirtual) {
		if wide {
			bits := GP32()
			BZHIL(cnt.As32(), full, bits)
			active[i] = K()
			KMOVW(bits, active[i])
		} else {
			xc, v := XMM(), YMM()
			VMOVD(cnt.As32(), xc)
			VPBROADCASTD(xc, v)
			active[i] = YMM()
			VPCMPGTD(iota, v, active[i]) // cnt > lane index
		}
	})
	at := func(base GPVirtual, i int) Mem { return Mem{Base: base, Disp: 4 * L * i} }
	loads := 0
	load := func(base GPVirtual) V {
		v := newS()
		loads++
		for i := range v {
			if wide {
				label := fmt.Sprintf("%s_load%d_%d", k.name, loads, i)
				CMPQ(n, U32(L*(i+1)))
				JB(LabelRef(label + "_masked"))
				VMOVUPS(at(base, i), v[i])
				JMP(LabelRef(label + "_done"))
				Label(label + "_masked")
				VMOVUPS_Z(at(base, i), active[i], v[i])
				Label(label + "_done")
				continue
			}
			// As for stores (fullOrMasked), a plain load when the chain is full.
			label := fmt.Sprintf("%s_load%d_%d", k.name, loads, i)
			CMPQ(n, U32(L*(i+1)))
			JB(LabelRef(label + "_masked"))
			VMOVUPS(at(base, i), v[i])
			JMP(LabelRef(label + "_done"))
			Label(label + "_masked")
			VMASKMOVPS(at(base, i), active[i], v[i])
			Label(label + "_done")
		}
		return v
	}
	x := load(xp)
	hi, exc := k.body(x)
	p, ok := pending[hi[0]]
	if !ok {
		panic("body did not return a hi + lo pair")
	}
	var res V
	if k.withG {
		g := load(gp)
		if wide {
			// g = m·2^e with |m| in [1, 2): m·hi + m·lo is rounded once where
			// the product of g and lo could be subnormal and round on its own
			// (near float32's underflow that costs up to half an ulp of the
			// result), then scaled (exactly, or a second rounding into the
			// subnormal range below 2^−25 of the first). g = ±0 has m = ±1
			// and e = −Inf; ±Inf has m = ±1 and e = +Inf, so the result is
			// g·hi with no Inf − Inf.
			m, e := newS(), newS()
			for i := range g {
				VGETMANTPS(U8(0), g[i], m[i]) // interval [1, 2), g's sign
				VGETEXPPS(g[i], e[i])
			}
			res = scalefS(sfma(m, p.hi, smul(m, p.lo)), e)
		} else {
			// g = ±Inf: g·hi + g·lo would be Inf − Inf (or Inf·0) = NaN where
			// the answer is g·hi: g·lo is kept finite (±Inf becomes
			// ±MaxFloat32, NaN −MaxFloat32). For finite g it is finite
			// already (|lo| < |hi|).
			res = sfma(g, p.hi, finite(smul(g, p.lo)))
		}
	} else if p.lo != nil {
		res = sadd(p.hi, p.lo)
	} else {
		res = p.hi
	}
	if p.sign != nil {
		res = sop3(VORPS, sand(res, csi(0x7fffffff)), p.sign)
	}
	// exc &= active; then active &^= exc is the store mask.
	store := active
	for i := range exc {
		bits := GP32()
		if wide {
			KANDW(active[i], exc[i], exc[i])
			KMOVW(exc[i], bits)
			MOVW(bits.As16(), Mem{Base: excp, Disp: 2 * i})
			KANDNW(active[i], exc[i], active[i])
		} else {
			VANDPS(active[i], exc[i], exc[i])
			VMOVMSKPS(exc[i], bits)
			MOVB(bits.As8(), Mem{Base: excp, Disp: i})
			VANDNPS(active[i], exc[i], active[i])
		}
		ORL(bits, anyExc)
	}
	addOrStore(k.name, addFlag, func(i int) {
		old := vreg()
		if wide {
			fullOrMasked512(fmt.Sprintf("%s_add%d", k.name, i), store[i], func() {
				VADDPS(at(dst, i), res[i], old)
				VMOVUPS(old, at(dst, i))
			}, func() { addMaskedPS(at(dst, i), store[i], res[i], old) })
		} else {
			fullOrMasked(fmt.Sprintf("%s_add%d", k.name, i), store[i], func() {
				VMOVUPS(at(dst, i), old)
				VADDPS(res[i], old, old)
				VMOVUPS(old, at(dst, i))
			}, func() {
				VMASKMOVPS(at(dst, i), store[i], old)
				VADDPS(res[i], old, old)
				VMASKMOVPS(old, store[i], at(dst, i))
			})
		}
	}, func(i int) {
		if wide {
			fullOrMasked512(fmt.Sprintf("%s_store%d", k.name, i), store[i],
				func() { VMOVUPS(res[i], at(dst, i)) },
				func() { VMOVUPS(res[i], store[i], at(dst, i)) })
		} else {
			fullOrMasked(fmt.Sprintf("%s_store%d", k.name, i), store[i],
				func() { VMOVUPS(res[i], at(dst, i)) },
				func() { VMASKMOVPS(res[i], store[i], at(dst, i)) })
		}
	})
	nextIteration(loop, n, 4*L*U, k.withG, dst, xp, gp, excp, L/8*U, L*U)

	Label(done)
	VZEROUPPER()
	returnNonzero(anyExc)
	wide = false
}

// finite maps ±Inf to ±MaxFloat32 and NaN to −MaxFloat32 (min and max;
// VMAXPS returns its second source for a NaN).
func finite(a V) V {
	return smin(smax(a, cs(-math.MaxFloat32)), cs(math.MaxFloat32))
}

// fullOrMasked runs full when every lane of the AVX2 mask is set, else
// masked: a masked store (VMASKMOVPS) costs several times a plain one on
// AMD's cores, and a chain is nearly always full and free of exceptions.
func fullOrMasked(label string, mask Register, full, masked func()) {
	bits := GP32()
	VMOVMSKPS(mask, bits)
	CMPL(bits, U32(0xFF))
	JNE(LabelRef(label + "_masked"))
	full()
	JMP(LabelRef(label + "_done"))
	Label(label + "_masked")
	masked()
	Label(label + "_done")
}

// fullOrMasked512 is fullOrMasked for an AVX-512 opmask.
func fullOrMasked512(label string, mask Register, full, masked func()) {
	KORTESTW(mask, mask)
	JCC(LabelRef(label + "_masked")) // CF clear: not every lane is set
	full()
	JMP(LabelRef(label + "_done"))
	Label(label + "_masked")
	masked()
	Label(label + "_done")
}

func (k kernel32) String() string { return fmt.Sprintf("%s (U=%d)", k.name, k.unroll) }
