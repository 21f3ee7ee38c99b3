package main

// The optimizer update kernels of package optim: one SGD and one Adam
// kernel per element type (float32, float64) and instruction set (AVX-512,
// AVX2), and the scan for the first NaN or ±Inf with which it checks the
// gradients (firstNonFinite). Each update kernel repeats the scalar loop of optim/kernels.go operation for
// operation, in the element type, so that its results are the scalar
// loop's bit for bit: every product and sum is its own rounded instruction
// (never an FMA), and VSQRTP* and VDIVP* are correctly rounded like the
// scalar sqrt (for float32, the float64 root rounded to float32, which is
// the correctly rounded float32 root) and division.
//
// The options are bits of the kernel's flags (the UpdateFlags of package
// simd), tested by well-predicted branches inside the loop rather than
// compiled into one kernel per combination. Maximize needs no branch: the
// gradient is XORed with −0 or +0. Full vectors go through the main loop;
// the last len(p) mod lanes elements through the same body once more under
// a mask (an opmask register with AVX-512, a lane mask and VMASKMOVP* with
// AVX2; neither touches memory in masked-off lanes). Each kernel returns
// the index of the first element whose new parameter is NaN or ±Inf, or −1.

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The flag bits, as simd.UpdateFlags defines them.
const (
	flagMaximize = 1 << iota
	flagWeightDecay
	flagMomentum
	flagFirstStep
	flagNesterov
	flagDecay
	flagAMSGrad
)

// The hyperparameter arrays, as package simd defines them.
const (
	sgdLR = iota
	sgdMomentum
	sgdKeep
	sgdWeightDecay
	sgdParams
)

const (
	adamBeta1 = iota
	adamBeta2
	adamOneMinusBeta1
	adamOneMinusBeta2
	adamEps
	adamWeightDecay
	adamDecay
	adamStepSize
	adamBC2Sqrt
	adamParams
)

// upd is the target of one update kernel: AVX-512 (ZMM registers, opmasks)
// or AVX2 (YMM registers only, lane masks), float32 or float64 lanes.
type upd struct {
	wide, f64 bool

	name  string
	flags GPVirtual // the flags argument
	h     GPVirtual // the hyperparameter array
	hyper []VecVirtual
	sign  VecVirtual // −0 or +0 in every lane: the Maximize flag
	i     GPVirtual  // index of the vector's first element
	res   GPVirtual  // the first non-finite index so far, or −1
}

func (u *upd) typ() string { return "float" + u.bits() }

func (u *upd) size() int {
	if u.f64 {
		return 8
	}
	return 4
}

// lanes is the number of elements per vector.
func (u *upd) lanes() int {
	if u.wide {
		return 64 / u.size()
	}
	return 32 / u.size()
}

func (u *upd) vec() VecVirtual {
	if u.wide {
		return ZMM()
	}
	return YMM()
}

// pick returns the float32 or the float64 form of an instruction.
func (u *upd) pick(ps, pd func(...Op)) func(...Op) {
	if u.f64 {
		return pd
	}
	return ps
}

// Three-operand arithmetic, dst = a ∘ b (the Go assembler's order is b, a,
// dst); dst may be a or b. b may be memory or a hyperparameter.
func (u *upd) add(dst, a, b Op) { u.pick(VADDPS, VADDPD)(b, a, dst) }
func (u *upd) sub(dst, a, b Op) { u.pick(VSUBPS, VSUBPD)(b, a, dst) }
func (u *upd) mul(dst, a, b Op) { u.pick(VMULPS, VMULPD)(b, a, dst) }
func (u *upd) div(dst, a, b Op) { u.pick(VDIVPS, VDIVPD)(b, a, dst) }
func (u *upd) xor(dst, a, b Op) { u.pick(VXORPS, VXORPD)(b, a, dst) }

// max is a > b ? a : b, as the scalar AMSGrad comparison (VMAXP* returns
// its second source, b, when the operands are unordered or equal).
func (u *upd) max(dst, a, b Op) { u.pick(VMAXPS, VMAXPD)(b, a, dst) }

func (u *upd) sqrt(dst, a Op) { u.pick(VSQRTPS, VSQRTPD)(a, dst) }
func (u *upd) mov(dst, a Op)  { u.pick(VMOVAPS, VMOVAPD)(a, dst) }

// hp returns hyperparameter j in every lane: a register loaded before the
// loop with AVX-512 (32 registers), a fresh broadcast from the array with
// AVX2, whose 16 registers the Adam body and ten hyperparameters would
// exceed (a broadcast from memory is a load, not an ALU operation).
func (u *upd) hp(j int) Op {
	if u.wide {
		return u.hyper[j]
	}
	r := YMM()
	u.broadcast(Mem{Base: u.h, Disp: u.size() * j}, r)
	return r
}

func (u *upd) broadcast(m Mem, r VecVirtual) {
	if u.f64 {
		VBROADCASTSD(m, r)
	} else {
		VBROADCASTSS(m, r)
	}
}

// access is how one pass of the body loads and stores: whole vectors, or
// the tail under mask (nil: whole).
type access struct {
	u    *upd
	mask Register
}

func (a access) at(base GPVirtual) Mem {
	return Mem{Base: base, Index: a.u.i, Scale: uint8(a.u.size())}
}

func (a access) load(base GPVirtual) VecVirtual {
	u, r := a.u, a.u.vec()
	switch {
	case a.mask == nil:
		u.pick(VMOVUPS, VMOVUPD)(a.at(base), r)
	case u.wide && u.f64:
		VMOVUPD_Z(a.at(base), a.mask, r)
	case u.wide:
		VMOVUPS_Z(a.at(base), a.mask, r)
	case u.f64:
		VMASKMOVPD(a.at(base), a.mask, r)
	default:
		VMASKMOVPS(a.at(base), a.mask, r)
	}
	return r
}

func (a access) store(r VecVirtual, base GPVirtual) {
	u := a.u
	switch {
	case a.mask == nil:
		u.pick(VMOVUPS, VMOVUPD)(r, a.at(base))
	case u.wide:
		u.pick(VMOVUPS, VMOVUPD)(r, a.mask, a.at(base))
	case u.f64:
		VMASKMOVPD(r, a.mask, a.at(base))
	default:
		VMASKMOVPS(r, a.mask, a.at(base))
	}
}

// when emits then() to run only if a flag bit is set.
func (u *upd) when(flag uint8, label string, then func()) {
	TESTB(U8(flag), u.flags)
	JZ(LabelRef(label))
	then()
	Label(label)
}

// either emits then() if the flag bit is set, else otherwise().
func (u *upd) either(flag uint8, label string, then, otherwise func()) {
	TESTB(U8(flag), u.flags)
	JZ(LabelRef(label + "_else"))
	then()
	JMP(LabelRef(label + "_end"))
	Label(label + "_else")
	otherwise()
	Label(label + "_end")
}

// checkFinite sets res to i + the first lane where v is NaN or ±Inf (v − v
// is then NaN: the scalar test v−v != 0) unless res is set already, and
// then jumps to exit unless that is "".
func (a access) checkFinite(v VecVirtual, label, exit string) {
	u := a.u
	d := u.vec()
	u.sub(d, v, v)
	bits := GP64()
	cmp := u.pick(VCMPPS, VCMPPD)
	if u.wide {
		k := K()
		cmp(U8(cmpUNORD), d, d, k)
		if a.mask != nil {
			if u.f64 {
				KANDB(a.mask, k, k)
			} else {
				KANDW(a.mask, k, k)
			}
		}
		if u.f64 {
			KMOVB(k, bits.As32())
		} else {
			KMOVW(k, bits.As32())
		}
	} else {
		cmp(U8(cmpUNORD), d, d, d)
		if a.mask != nil {
			u.pick(VANDPS, VANDPD)(a.mask, d, d)
		}
		u.pick2(VMOVMSKPS, VMOVMSKPD)(d, bits.As32())
	}
	TESTQ(bits, bits)
	JZ(LabelRef(label))
	TESTQ(u.res, u.res)
	JNS(LabelRef(label)) // an earlier vector had one
	TZCNTQ(bits, bits)
	LEAQ(Mem{Base: u.i, Index: bits, Scale: 1}, u.res)
	if exit != "" {
		JMP(LabelRef(exit))
	}
	Label(label)
}

// pick2 is pick for the two-operand instructions.
func (u *upd) pick2(ps, pd func(a, b Op)) func(a, b Op) {
	if u.f64 {
		return pd
	}
	return ps
}

// kernel emits the declaration of an update kernel (the slices, then h
// and flags), the loading of their bases and of the gradient's sign mask
// (u.sign), the loop over whole vectors and the masked tail; body emits
// one vector's update from the slices' bases (labels must carry the suffix).
func (u *upd) kernel(name string, slices []string, hyper int, doc []string, body func(a access, suffix string, base []GPVirtual)) {
	u.name = name
	TEXT(name, NOSPLIT, fmt.Sprintf("func(%s []%s, h *[%d]%s, flags uint8) int", strings.Join(slices, ", "), u.typ(), hyper, u.typ()))
	Pragma("noescape")
	Doc(doc...)
	u.h, u.flags = GP64(), GP8()
	Load(Param("h"), u.h)
	Load(Param("flags"), u.flags)
	base := make([]GPVirtual, len(slices))
	for j, s := range slices {
		base[j] = GP64()
		Load(Param(s).Base(), base[j])
	}
	u.sign = u.signMask()
	u.loop(Param(slices[0]).Len(), hyper, func(a access, suffix string) { body(a, suffix, base) })
}

// loop emits, for a slice of the given length, the loop over its whole
// vectors, the masked tail and the return of res, after broadcasting the
// first hyper entries of h to registers with AVX-512.
func (u *upd) loop(length Component, hyper int, body func(a access, suffix string)) {
	name := u.name
	n := GP64()
	Load(length, n)
	u.hyper = nil
	if u.wide {
		for j := range hyper {
			r := ZMM()
			u.broadcast(Mem{Base: u.h, Disp: u.size() * j}, r)
			u.hyper = append(u.hyper, r)
		}
	}
	L := u.lanes()
	u.i, u.res = GP64(), GP64()
	XORQ(u.i, u.i)
	MOVQ(I32(-1), u.res)
	whole := GP64()
	MOVQ(n, whole)
	ANDQ(I32(-L), whole)

	loop, tail, done := name+"_loop", name+"_tail", name+"_done"
	Label(loop)
	CMPQ(u.i, whole)
	JAE(LabelRef(tail))
	body(access{u: u}, "_v")
	ADDQ(U8(L), u.i)
	JMP(LabelRef(loop))

	Label(tail)
	CMPQ(u.i, n)
	JAE(LabelRef(done))
	cnt := GP64()
	MOVQ(n, cnt)
	SUBQ(u.i, cnt)
	var mask Register
	if u.wide {
		all, bits := GP32(), GP32()
		MOVL(U32(1<<L-1), all)
		BZHIL(cnt.As32(), all, bits)
		mask = K()
		if u.f64 {
			KMOVB(bits, mask)
		} else {
			KMOVW(bits, mask)
		}
	} else {
		// Lane j is active when cnt > j.
		var w [8]uint64
		for j := range w {
			if u.f64 {
				if j < 4 {
					w[j] = uint64(j)
				}
			} else {
				w[j] = uint64(2*j) | uint64(2*j+1)<<32
			}
		}
		iota := consts.vec8(w)
		x, v := XMM(), YMM()
		mask = YMM()
		if u.f64 {
			VMOVQ(cnt, x)
			VPBROADCASTQ(x, v)
			VPCMPGTQ(iota, v, mask)
		} else {
			VMOVD(cnt.As32(), x)
			VPBROADCASTD(x, v)
			VPCMPGTD(iota, v, mask)
		}
	}
	body(access{u: u, mask: mask}, "_t")

	Label(done)
	VZEROUPPER()
	Store(u.res, ReturnIndex(0))
	RET()
}

// signMask returns −0 in every lane if the Maximize flag is set, else +0:
// XORed into the gradient, it is the scalar loop's d = −d (which flips the
// sign bit, NaN included) or nothing.
func (u *upd) signMask() VecVirtual {
	s := u.vec()
	u.xor(s, s, s)
	bit := uint64(0x80000000_80000000)
	if u.f64 {
		bit = 1 << 63
	}
	u.when(flagMaximize, u.name+"_nomax", func() { u.pick(VMOVUPS, VMOVUPD)(ci(bit), s) })
	return s
}

func (u *upd) isa() string {
	if u.wide {
		return "AVX512"
	}
	return "AVX2"
}

func (u *upd) bits() string {
	if u.f64 {
		return "64"
	}
	return "32"
}

// sgdUpdate is optim's sgdKernel.Run:
//
//	d = ±g (+ λ·p)
//	b = d on the first step, else μ·b + keep·d (with momentum)
//	d = d + μ·b (Nesterov) or b
//	p = p − lr·d
func sgdUpdate(wide, f64 bool) {
	u := &upd{wide: wide, f64: f64}
	name := updateName("SGD", wide, f64)
	u.kernel(name, []string{"p", "g", "buf"}, sgdParams, []string{
		name + " is one SGD step over p (" + u.isa() + ", " + u.typ() + "), bit for bit the scalar loop of",
		"optim's sgdKernel; h holds lr, momentum, 1 − dampening and weight decay, flags the options",
		"(UpdateFlags). buf must be as long as p with Momentum. It returns the first index where",
		"the new p is NaN or ±Inf, or −1.",
	}, func(a access, sfx string, base []GPVirtual) {
		pp, gp, bp := base[0], base[1], base[2]
		l := name + sfx
		w, d := a.load(pp), a.load(gp)
		u.xor(d, d, u.sign)
		t := u.vec()
		u.when(flagWeightDecay, l+"_nowd", func() {
			u.mul(t, w, u.hp(sgdWeightDecay))
			u.add(d, d, t)
		})
		u.when(flagMomentum, l+"_nomom", func() {
			b := u.vec()
			u.either(flagFirstStep, l+"_first", func() {
				u.mov(b, d) // PyTorch's first buffer is the gradient itself, undamped
			}, func() {
				old := a.load(bp)
				u.mul(b, old, u.hp(sgdMomentum))
				u.mul(t, d, u.hp(sgdKeep))
				u.add(b, b, t)
			})
			a.store(b, bp)
			u.either(flagNesterov, l+"_nesterov", func() {
				u.mul(t, b, u.hp(sgdMomentum))
				u.add(d, d, t)
			}, func() {
				u.mov(d, b)
			})
		})
		u.mul(t, d, u.hp(sgdLR))
		u.sub(w, w, t)
		a.store(w, pp)
		a.checkFinite(w, l+"_finite", "")
	})
}

// adamUpdate is optim's adamKernel.Run:
//
//	g = ±g
//	p = decay·p (AdamW) or g = g + λ·p (Adam's L2)
//	m = β1·m + (1−β1)·g
//	v = β2·v + ((1−β2)·g)·g
//	v = vmax = max(vmax, v) (AMSGrad)
//	p = p − (stepSize·m) / (√v / √(1−β2^t) + eps)
func adamUpdate(wide, f64 bool) {
	u := &upd{wide: wide, f64: f64}
	name := updateName("Adam", wide, f64)
	u.kernel(name, []string{"p", "g", "m", "v", "vmax"}, adamParams, []string{
		name + " is one Adam or AdamW step over p (" + u.isa() + ", " + u.typ() + "), bit for bit the",
		"scalar loop of optim's adamKernel; h holds the hyperparameters (AdamBeta1 and on), flags",
		"the options (UpdateFlags). vmax must be as long as p with AMSGrad. It returns the first",
		"index where the new p is NaN or ±Inf, or −1.",
	}, func(a access, sfx string, base []GPVirtual) {
		pp, gp, mp, vp, xp := base[0], base[1], base[2], base[3], base[4]
		l := name + sfx
		w, gr := a.load(pp), a.load(gp)
		u.xor(gr, gr, u.sign)
		t := u.vec()
		u.when(flagDecay, l+"_nodecay", func() {
			u.mul(w, w, u.hp(adamDecay))
		})
		u.when(flagWeightDecay, l+"_nowd", func() {
			u.mul(t, w, u.hp(adamWeightDecay))
			u.add(gr, gr, t)
		})
		m := a.load(mp)
		u.mul(m, m, u.hp(adamBeta1))
		u.mul(t, gr, u.hp(adamOneMinusBeta1))
		u.add(m, m, t)
		a.store(m, mp)
		v := a.load(vp)
		u.mul(v, v, u.hp(adamBeta2))
		u.mul(t, gr, u.hp(adamOneMinusBeta2))
		u.mul(t, t, gr)
		u.add(v, v, t)
		a.store(v, vp)
		u.when(flagAMSGrad, l+"_noams", func() {
			old := a.load(xp)
			u.max(v, old, v)
			a.store(v, xp)
		})
		u.sqrt(v, v)
		u.div(v, v, u.hp(adamBC2Sqrt))
		u.add(v, v, u.hp(adamEps))
		u.mul(t, m, u.hp(adamStepSize))
		u.div(t, t, v)
		u.sub(w, w, t)
		a.store(w, pp)
		a.checkFinite(w, l+"_finite", "")
	})
}

// updateName is the kernel's name: SGD32AVX512, Adam64AVX2 and so on.
func updateName(kind string, wide, f64 bool) string {
	u := &upd{wide: wide, f64: f64}
	return kind + u.bits() + u.isa()
}

// firstNonFinite is optim's NaN check of the gradients: the index of the
// first NaN or ±Inf in x, or −1. It stops at the first.
func firstNonFinite(wide, f64 bool) {
	u := &upd{wide: wide, f64: f64}
	u.name = updateName("FirstNonFinite", wide, f64)
	TEXT(u.name, NOSPLIT, fmt.Sprintf("func(x []%s) int", u.typ()))
	Pragma("noescape")
	Doc(u.name + " returns the index of the first NaN or ±Inf in x (" + u.isa() + ", " + u.typ() + "), or −1.")
	xp := GP64()
	Load(Param("x").Base(), xp)
	u.loop(Param("x").Len(), 0, func(a access, sfx string) {
		a.checkFinite(a.load(xp), u.name+sfx+"_finite", u.name+"_done")
	})
}
