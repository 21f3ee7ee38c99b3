package main

// Vector helpers over avo: three-operand arithmetic on virtual ZMM
// registers, constants in one read-only table, and opmask comparisons and
// blends. Names follow the math (add(a, b) is a+b); the Go assembler's
// reversed operand order stays inside this file.
//
// A V is U registers of 8 float64 lanes each: every helper emits its
// instruction U times, interleaved, so the kernels process 8·U elements per
// iteration as U independent dependency chains. The chains of the float64
// kernels are hundreds of cycles long, and without interleaving the
// out-of-order window cannot overlap iterations enough to keep the vector
// units busy.

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// U is the unroll factor of the kernel being generated.
var U = 1

// V is U vectors of 8 float64 (or int64) lanes.
type V []VecVirtual

// K_ is U opmask registers.
type K_ []OpmaskVirtual

// elem is what a lane type needs of the instruction set: a fresh register
// and the unaligned and aligned moves. f64 is float64 lanes in ZMM
// registers (this file); f32 is float32 lanes in ZMM or YMM (vec32.go).
type elem struct {
	fresh      func() VecVirtual
	movu, mova func(...Op)
}

var f64 = elem{func() VecVirtual { return ZMM() }, VMOVUPD, VMOVAPD}

// new returns U fresh registers.
func (e elem) new() V {
	v := make(V, U)
	for i := range v {
		v[i] = e.fresh()
	}
	return v
}

func newV() V { return f64.new() }

func newK() K_ {
	k := make(K_, U)
	for i := range k {
		k[i] = K()
	}
	return k
}

// splat shares one register among all U chains (for read-only values).
func splat(r VecVirtual) V {
	v := make(V, U)
	for i := range v {
		v[i] = r
	}
	return v
}

// arg is a V or a memory operand (the same for every chain).
type arg any

func at(a arg, i int) Op {
	switch a := a.(type) {
	case V:
		return a[i]
	case Mem:
		return a
	}
	panic("bad operand")
}

// Comparison predicates for VCMPPD (ordered, quiet; NGE and NLE are true
// for NaN).
const (
	cmpEQ    = 0x00
	cmpUNORD = 0x03
	cmpLT    = 0x11
	cmpLE    = 0x12
	cmpNGE   = 0x19 // !(a >= b): a < b or unordered
	cmpNLE   = 0x16 // !(a <= b): a > b or unordered
	cmpNLT   = 0x15 // !(a < b): a >= b or unordered
	cmpNEQ   = 0x04 // a != b or unordered
	cmpGE    = 0x1D
	cmpGT    = 0x1E
)

// constTable holds every constant as 8 copies of 64 bits, so each can be a
// full-width memory operand.
type constTable struct {
	offs  map[uint64]int
	words []uint64
}

var consts = constTable{offs: map[uint64]int{}}

const constSym = "kconst"

func (t *constTable) mem(bits uint64) Mem {
	off, ok := t.offs[bits]
	if !ok {
		off = len(t.words) * 8
		for i := 0; i < 8; i++ {
			t.words = append(t.words, bits)
		}
		t.offs[bits] = off
	}
	return NewDataAddr(NewStaticSymbol(constSym), off)
}

// vec8 adds 8 arbitrary words (a lookup table row) and returns its address.
func (t *constTable) vec8(w [8]uint64) Mem {
	off := len(t.words) * 8
	t.words = append(t.words, w[:]...)
	return NewDataAddr(NewStaticSymbol(constSym), off)
}

// emit writes the table; call it once, after every function.
func (t *constTable) emit() {
	GLOBL(constSym, RODATA|NOPTR)
	for i, w := range t.words {
		DATA(8*i, U64(w))
	}
}

// c is the float64 constant v in every lane.
func c(v float64) Mem { return consts.mem(math.Float64bits(v)) }

// ci is the 64-bit integer pattern b in every lane.
func ci(b uint64) Mem { return consts.mem(b) }

func isMem(a arg) bool { _, ok := a.(Mem); return ok }

// reg returns a in registers, loading a memory operand once for all chains.
func (e elem) reg(a arg) V {
	if v, ok := a.(V); ok {
		return v
	}
	r := e.fresh()
	e.movu(a.(Mem), r)
	return splat(r)
}

func reg(a arg) V { return f64.reg(a) }

// commute puts a memory operand, if any, second.
func commute(a, b arg) (arg, arg) {
	if isMem(a) && !isMem(b) {
		return b, a
	}
	return a, b
}

// op3 emits inst(b, a, r) per chain: r = a ∘ b, b may be in memory.
func (e elem) op3(inst func(...Op), a, b arg) V {
	ra, r := e.reg(a), e.new()
	for i := range r {
		inst(at(b, i), ra[i], r[i])
	}
	return r
}

func op3(inst func(...Op), a, b arg) V { return f64.op3(inst, a, b) }

// unary emits inst(pre..., a, r) per chain: r = inst(a), with pre the
// immediate or table operands that come first.
func (e elem) unary(inst func(...Op), a V, pre ...Op) V {
	r := e.new()
	for i := range r {
		inst(append(append([]Op{}, pre...), a[i], r[i])...)
	}
	return r
}

func add(a, b arg) V { a, b = commute(a, b); return op3(VADDPD, a, b) }
func sub(a, b arg) V { return op3(VSUBPD, a, b) }
func mul(a, b arg) V { a, b = commute(a, b); return op3(VMULPD, a, b) }
func div(a, b arg) V { return op3(VDIVPD, a, b) }

// maxV returns max(a, b); VMAXPD returns its second source when either is
// NaN, so callers pass the value whose NaN must survive as b.
func maxV(a, b arg) V { return op3(VMAXPD, a, b) }

// minV is maxV for the minimum.
func minV(a, b arg) V { return op3(VMINPD, a, b) }

func andV(a, b arg) V { a, b = commute(a, b); return op3(VANDPD, a, b) }
func xorV(a, b arg) V { a, b = commute(a, b); return op3(VXORPD, a, b) }
func orV(a, b arg) V  { a, b = commute(a, b); return op3(VORPD, a, b) }
func absV(a arg) V    { return andV(a, ci(1<<63-1)) }
func negV(a arg) V    { return xorV(a, ci(1<<63)) }

// scalef returns a·2^floor(b).
func scalef(a, b arg) V { return op3(VSCALEFPD, a, b) }

// copy returns a fresh copy of a in every chain.
func (e elem) copy(a arg) V {
	r := e.new()
	for i := range r {
		if isMem(a) {
			e.movu(at(a, i), r[i])
		} else {
			e.mova(at(a, i), r[i])
		}
	}
	return r
}

func copyV(a arg) V { return f64.copy(a) }

// fmaLike emits a fused multiply-add family instruction: the 213 form
// (r = r·b ∘ cc) when cc is in memory, else the 231 form (r = a·b ∘ r).
func (e elem) fmaLike(i213, i231 func(...Op), a, b, cc arg) V {
	if isMem(cc) {
		if isMem(b) {
			a, b = b, a
		}
		r, rb := e.copy(a), e.reg(b)
		for i := range r {
			i213(cc.(Mem), rb[i], r[i])
		}
		return r
	}
	a, b = commute(a, b)
	r, ra := e.copy(cc), e.reg(a)
	for i := range r {
		i231(at(b, i), ra[i], r[i])
	}
	return r
}

// fma returns a·b + c rounded once.
func fma(a, b, cc arg) V { return f64.fmaLike(VFMADD213PD, VFMADD231PD, a, b, cc) }

// fnma returns −(a·b) + c rounded once.
func fnma(a, b, cc arg) V { return f64.fmaLike(VFNMADD213PD, VFNMADD231PD, a, b, cc) }

// fms returns a·b − c rounded once.
func fms(a, b, cc arg) V { return f64.fmaLike(VFMSUB213PD, VFMSUB231PD, a, b, cc) }

// roundEven rounds to the nearest integer, ties to even.
func roundEven(a V) V {
	return f64.unary(VRNDSCALEPD, a, U8(0x08)) // imm 0: nearest even; bit 3: no precision exception
}

// cmp returns the mask a pred b.
func cmp(pred uint8, a, b arg) K_ {
	ra, k := reg(a), newK()
	for i := range k {
		VCMPPD(U8(pred), at(b, i), ra[i], k[i])
	}
	return k
}

// blend returns k ? b : a lane by lane. avo takes a masked instruction to
// read its destination (merge masking), which would keep a fresh
// destination live around the whole loop; starting from a copy of a gives
// the destination a definition, and the copy is free (move elimination, or
// dropped when the allocator gives both the same register).
func blend(k K_, a, b arg) V {
	r := copyV(a)
	for i := range r {
		VBLENDMPD(at(b, i), r[i], k[i], r[i])
	}
	return r
}

// signMask is set in lanes whose sign bit is set (negative, −0, −NaN).
func signMask(a V) K_ {
	k := newK()
	for i := range k {
		VPMOVQ2M(a[i], k[i])
	}
	return k
}

// kand returns a & b.
func kand(a, b K_) K_ {
	k := newK()
	for i := range k {
		KANDB(b[i], a[i], k[i])
	}
	return k
}

// permTable16 returns t[idx & 15] per lane, from a 16-entry table stored as
// two consecutive rows (8 words each) at m.
func permTable16(m Mem, idx V) V {
	r := copyV(m)
	for i := range r {
		VPERMT2PD(m.Offset(64), idx[i], r[i])
	}
	return r
}

// permTable8 returns t[idx & 7] per lane from the 8-entry row at m.
func permTable8(m Mem, idx V) V { return f64.unary(VPERMPD, idx, m) }

// param broadcasts p[i] to all lanes, one register shared by the chains.
func param(p GPVirtual, i int) V {
	r := ZMM()
	VBROADCASTSD(Mem{Base: p, Disp: 8 * i}, r)
	return splat(r)
}
