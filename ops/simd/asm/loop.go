package main

// The loop shared by every kernel: 8·U elements per iteration, the tail
// masked (AVX-512 masked loads do not fault on masked-off lanes), the result
// optionally multiplied by g and added to dst, and lanes the body marks as
// exceptions left unwritten for the Go caller to fill in: their bits go to
// exc, one byte per 8 elements (it must hold U·⌈len(x)/8U⌉ bytes, U the
// unroll factor, at most ⌈len(x)/8⌉ + U − 1), and the result reports
// whether any bit is set.

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// body computes f^(k)(x) for every lane and either the lanes it cannot
// handle (exact kernels) or a bound T on the magnitudes of the terms summed
// in f^(k), to which its error is relative (fast kernels).
type body func(x V) (f, scale V, exc K_)

// fastEps bounds the error of the fast kernels relative to the term scale,
// together with the reference's own few float64 ulp (the fast evaluations
// are good to about 2^−43; the gated ones to |q|·2^−52 ≤ 2^−44 wherever a
// float32 result can be nonzero). A float32 result is stored only when the
// value is farther than that from every float32 rounding boundary, so that
// it rounds exactly as the float64 reference does; other lanes (about 2 in
// 10^4, from 2·fastEps·T/|f|/2^−24) are exceptions.
const fastEps = 0x1p-40

type kernel struct {
	name   string
	unroll int  // U: independent chains per iteration
	f32    bool // float32 elements, computed in float64 lanes
	withG  bool // dst = g·f^(k)(x) instead of f(x)
	doc    []string
	// setup runs once before the loop (loading parameters from p) and
	// returns the body.
	setup func(p GPVirtual) body
}

func (k kernel) generate() {
	U = k.unroll
	typ, elem := "float64", 8
	if k.f32 {
		typ, elem = "float32", 4
	}
	dst, xp, gp := kernelHeader(k.name, typ, k.doc, k.withG)
	n, addFlag := GP64(), GP8()
	Load(Param("x").Len(), n)
	Load(Param("add"), addFlag)
	pp, excp := GP64(), GP64()
	Load(Param("p"), pp)
	Load(Param("exc").Base(), excp)
	f := k.setup(pp)

	anyExc := K()
	KXORB(anyExc, anyExc, anyExc)
	full := GP32()
	MOVL(U32(0xFF), full)

	loop, done := k.name+"_loop", k.name+"_done"
	Label(loop)
	TESTQ(n, n)
	JZ(LabelRef(done))
	// Chain i covers elements [8i, 8i+8) of this iteration; its mask has
	// min(max(n − 8i, 0), 8) bits.
	active := newK()
	chainCounts(n, 8, func(i int, cnt GPVirtual) {
		bits := GP32()
		BZHIL(cnt.As32(), full, bits)
		KMOVB(bits, active[i])
	})
	at := func(base GPVirtual, i int) Mem { return Mem{Base: base, Disp: 8 * elem * i} }
	load := func(base GPVirtual) V {
		v := newV()
		for i := range v {
			if k.f32 {
				VCVTPS2PD_Z(at(base, i), active[i], v[i])
			} else {
				VMOVUPD_Z(at(base, i), active[i], v[i])
			}
		}
		return v
	}
	x := load(xp)
	res, scale, exc := f(x)
	if k.withG {
		g := load(gp)
		res = mul(g, res)
		if scale != nil {
			scale = mul(g, scale)
		}
	}
	var r32 []VecVirtual
	if k.f32 {
		r32 = make([]VecVirtual, U)
		for i := range r32 {
			r32[i] = YMM()
			VCVTPD2PS(res[i], r32[i])
		}
	}
	if scale != nil {
		exc = certain(res, scale)
	}
	// In place, to stay within the 7 usable opmask registers: exc &= active,
	// then active &^= exc is the store mask.
	store := active
	for i := range exc {
		KANDB(active[i], exc[i], exc[i])
		KORB(exc[i], anyExc, anyExc)
		KMOVB(exc[i], Mem{Base: excp, Disp: i})
		KANDNB(active[i], exc[i], active[i])
	}

	addOrStore(k.name, addFlag, func(i int) {
		if k.f32 {
			addMaskedPS(at(dst, i), store[i], r32[i], YMM())
		} else {
			old := ZMM()
			VMOVUPD_Z(at(dst, i), store[i], old)
			VADDPD(res[i], old, old)
			VMOVUPD(old, store[i], at(dst, i))
		}
	}, func(i int) {
		if k.f32 {
			VMOVUPS(r32[i], store[i], at(dst, i))
		} else {
			VMOVUPD(res[i], store[i], at(dst, i))
		}
	})
	nextIteration(loop, n, 8*elem*U, k.withG, dst, xp, gp, excp, U, 8*U)

	Label(done)
	VZEROUPPER()
	r := GP32()
	KMOVB(anyExc, r)
	returnNonzero(r)
}

// kernelHeader declares a kernel func(dst, x, g []typ, add bool,
// p *[8]float64, exc []uint8) bool and loads the bases of dst, x and (when
// withG) g.
func kernelHeader(name, typ string, doc []string, withG bool) (dst, xp, gp GPVirtual) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x, g []%s, add bool, p *[8]float64, exc []uint8) bool", typ))
	Pragma("noescape")
	Doc(doc...)
	dst, xp, gp = GP64(), GP64(), GP64()
	Load(Param("dst").Base(), dst)
	Load(Param("x").Base(), xp)
	if withG {
		Load(Param("g").Base(), gp)
	}
	return dst, xp, gp
}

// chainCounts emits, for each chain i of U, cnt = min(max(n − width·i, 0),
// width), the number of its elements this iteration, and calls mask to
// turn cnt into the chain's mask.
func chainCounts(n GPVirtual, width int, mask func(i int, cnt GPVirtual)) {
	rest := GP64()
	MOVQ(n, rest)
	for i := range U {
		cnt := atMost(rest, width)
		mask(i, cnt)
		if i+1 < U {
			SUBQ(cnt, rest)
		}
	}
}

// atMost returns min(n, m) in a new register.
func atMost(n GPVirtual, m int) GPVirtual {
	cnt := GP64()
	MOVQ(U32(m), cnt)
	CMPQ(n, cnt)
	CMOVQLT(n, cnt)
	return cnt
}

// addOrStore emits the stores of one iteration, U chains: add(i) when the
// kernel's add flag is set (dst += result), else store(i) (dst = result).
func addOrStore(name string, addFlag GPVirtual, add, store func(i int)) {
	plain, next := name+"_plain", name+"_next"
	CMPB(addFlag, U8(0))
	JE(LabelRef(plain))
	for i := range U {
		add(i)
	}
	JMP(LabelRef(next))
	Label(plain)
	for i := range U {
		store(i)
	}
	Label(next)
}

// addMaskedPS adds r into the lanes of m that mask selects (AVX-512 masked
// float32 load, add, store; old is the scratch register).
func addMaskedPS(m Mem, mask, r, old Op) {
	VMOVUPS_Z(m, mask, old)
	VADDPS(r, old, old)
	VMOVUPS(old, mask, m)
}

// nextIteration moves the element pointers dst, x (and g when withG) on by
// step bytes and excp by excStep, takes min(n, count) elements off n, and
// jumps back to loop.
func nextIteration(loop string, n GPVirtual, step int, withG bool, dst, xp, gp, excp GPVirtual, excStep, count int) {
	ADDQ(U32(step), dst)
	ADDQ(U32(step), xp)
	if withG {
		ADDQ(U32(step), gp)
	}
	ADDQ(U32(excStep), excp)
	SUBQ(atMost(n, count), n)
	JMP(LabelRef(loop))
}

// returnNonzero returns r ≠ 0 as the kernel's bool result.
func returnNonzero(r GPVirtual) {
	TESTL(r, r)
	ret := GP8()
	SETNE(ret)
	Store(ret, ReturnIndex(0))
	RET()
}

// certain returns the lanes whose float32 rounding of v is not certain to
// be the rounding of the reference: those where v − fastEps·scale and
// v + fastEps·scale round differently (then a rounding boundary lies within
// the error bound; rounding is monotonic), and NaN lanes. scale may have
// either sign.
func certain(v, scale V) K_ {
	lo, hi := fnma(scale, c(fastEps), v), fma(scale, c(fastEps), v)
	k := newK()
	for i := range k {
		a, b := YMM(), YMM()
		VCVTPD2PS(lo[i], a)
		VCVTPD2PS(hi[i], b)
		VCMPPS(U8(cmpNEQ), b, a, k[i])
	}
	return k
}

// generateProbe emits, for a fast float32 kernel, a test hook that stores
// the float64 value f^(k)(x) and the term scale T of every lane before any
// rounding, so that tests can measure the error the certainty check relies
// on: func(v, t []float64, x []float32, p *[8]float64).
func (k kernel) generateProbe() {
	U = 1
	name := k.name + "Probe"
	TEXT(name, NOSPLIT, "func(v, t []float64, x []float32, p *[8]float64)")
	Pragma("noescape")
	Doc(name+" stores the unrounded float64 value and term scale of "+k.name+" (g = 1), for tests.",
		"len(v) and len(t) must be at least len(x).")
	vp, tp, xp, n, pp := GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("v").Base(), vp)
	Load(Param("t").Base(), tp)
	Load(Param("x").Base(), xp)
	Load(Param("x").Len(), n)
	Load(Param("p"), pp)
	f := k.setup(pp)
	full := GP32()
	MOVL(U32(0xFF), full)
	loop, done := name+"_loop", name+"_done"
	Label(loop)
	TESTQ(n, n)
	JZ(LabelRef(done))
	cnt, bits := atMost(n, 8), GP32()
	BZHIL(cnt.As32(), full, bits)
	active := K()
	KMOVB(bits, active)
	x := newV()
	VCVTPS2PD_Z(Mem{Base: xp}, active, x[0])
	res, scale, _ := f(x)
	VMOVUPD(res[0], active, Mem{Base: vp})
	VMOVUPD(scale[0], active, Mem{Base: tp})
	ADDQ(U32(64), vp)
	ADDQ(U32(64), tp)
	ADDQ(U32(32), xp)
	SUBQ(cnt, n)
	JMP(LabelRef(loop))
	Label(done)
	VZEROUPPER()
	RET()
}
