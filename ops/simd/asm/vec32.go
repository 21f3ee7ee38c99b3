package main

// Float32-lane helpers, for the kernels of gelu32.go: the same three-operand
// style as vec.go, on 16 float32 lanes per ZMM register with opmask
// registers for masks (AVX-512), or on 8 lanes per YMM register with
// vector masks (AVX2), chosen by wide. A mask M holds, per chain, a K
// register (AVX-512) or a vector whose lanes are all ones or all zeros, or
// any vector whose sign bit selects (AVX2: VBLENDVPS reads only the sign).

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// wide selects AVX-512 (true) or AVX2 (false) for the kernel being generated.
var wide bool

// lanes is the number of float32 lanes per register.
func lanes() int {
	if wide {
		return 16
	}
	return 8
}

// M is U masks.
type M []Register

func vreg() VecVirtual {
	if wide {
		return ZMM()
	}
	return YMM()
}

var f32 = elem{vreg, movu32, VMOVAPS}

// uniform holds the constants of cs and csi, one value in every lane. They
// are read with a 4-byte broadcast (VBROADCASTSS, and with AVX-512 the
// embedded-broadcast forms of bc) instead of a full-width load, which
// leaves the load ports and the cache to the table rows and the data (no
// difference in speed measured on AMD's Zen 5, where the float32-lane
// kernels are bound by their arithmetic).
var uniform = map[Mem]bool{}

// movu32 loads a register, broadcasting a uniform constant.
func movu32(ops ...Op) {
	if m, ok := ops[0].(Mem); ok && uniform[m] {
		VBROADCASTSS(m, ops[1])
		return
	}
	VMOVUPS(ops...)
}

// bc is inst, or with AVX-512 its embedded-broadcast form bcst when an
// operand is a uniform constant.
func bc(inst, bcst func(...Op)) func(...Op) {
	return func(ops ...Op) {
		if wide {
			for _, o := range ops {
				if m, ok := o.(Mem); ok && uniform[m] {
					bcst(ops...)
					return
				}
			}
		}
		inst(ops...)
	}
}

func newS() V { return f32.new() }

// cs is the float32 constant v in every lane.
func cs(v float64) Mem {
	b := math.Float32bits(float32(v))
	return csi(b)
}

// csi is the 32-bit pattern b in every lane.
func csi(b uint32) Mem {
	m := consts.mem(uint64(b)<<32 | uint64(b))
	uniform[m] = true
	return m
}

// row16 stores 16 float32 (a table row) and returns its address.
func row16(v [16]float32) Mem {
	var w [8]uint64
	for i := range w {
		w[i] = uint64(math.Float32bits(v[2*i])) | uint64(math.Float32bits(v[2*i+1]))<<32
	}
	return consts.vec8(w)
}

func sreg(a arg) V                      { return f32.reg(a) }
func sop3(inst func(...Op), a, b arg) V { return f32.op3(inst, a, b) }

func sadd(a, b arg) V { a, b = commute(a, b); return sop3(bc(VADDPS, VADDPS_BCST), a, b) }
func ssub(a, b arg) V { return sop3(bc(VSUBPS, VSUBPS_BCST), a, b) }
func smul(a, b arg) V { a, b = commute(a, b); return sop3(bc(VMULPS, VMULPS_BCST), a, b) }
func smin(a, b arg) V { return sop3(bc(VMINPS, VMINPS_BCST), a, b) }

// smax is max(a, b), b when either is NaN (VMAXPS returns its second
// source then).
func smax(a, b arg) V { return sop3(bc(VMAXPS, VMAXPS_BCST), a, b) }
func sand(a, b arg) V { a, b = commute(a, b); return sop3(bc(VANDPS, VANDPS_BCST), a, b) }
func sxor(a, b arg) V { a, b = commute(a, b); return sop3(bc(VXORPS, VXORPS_BCST), a, b) }

// iadd, sra and sll are 32-bit integer lane operations.
func iadd(a, b arg) V    { a, b = commute(a, b); return sop3(bc(VPADDD, VPADDD_BCST), a, b) }
func sra(a V, n uint8) V { return f32.unary(VPSRAD, a, U8(n)) }
func sll(a V, n uint8) V { return f32.unary(VPSLLD, a, U8(n)) }

// toInt truncates to int32 lanes (exact for the integral values passed).
func toInt(a V) V { return f32.unary(VCVTTPS2DQ, a) }

// sround rounds with the given VROUNDPS/VRNDSCALEPS mode: 0 nearest even,
// 1 down; bit 3 suppresses the precision exception.
func sround(a V, mode uint8) V {
	r := newS()
	for i := range r {
		if wide {
			VRNDSCALEPS(U8(0x08|mode), a[i], r[i])
		} else {
			VROUNDPS(U8(0x08|mode), a[i], r[i])
		}
	}
	return r
}

// sfmaTo is sfma(a, b, acc) computed in acc's registers, for an acc not
// used again (it saves the copy sfma makes, which the register allocator
// does not always coalesce away).
func sfmaTo(a, b arg, acc V) V {
	a, b = commute(a, b)
	ra := sreg(a)
	for i := range acc {
		bc(VFMADD231PS, VFMADD231PS_BCST)(at(b, i), ra[i], acc[i])
	}
	return acc
}

// sfma is a·b + c, sfms a·b − c, each rounded once.
func sfma(a, b, cc arg) V {
	return f32.fmaLike(bc(VFMADD213PS, VFMADD213PS_BCST), bc(VFMADD231PS, VFMADD231PS_BCST), a, b, cc)
}
func sfms(a, b, cc arg) V {
	return f32.fmaLike(bc(VFMSUB213PS, VFMSUB213PS_BCST), bc(VFMSUB231PS, VFMSUB231PS_BCST), a, b, cc)
}

// scmp returns the mask a pred b (predicates of vec.go).
func scmp(pred uint8, a, b arg) M {
	ra, m := sreg(a), make(M, U)
	for i := range m {
		if wide {
			m[i] = K()
		} else {
			m[i] = YMM()
		}
		bc(VCMPPS, VCMPPS_BCST)(U8(pred), at(b, i), ra[i], m[i])
	}
	return m
}

// outside returns the mask of lanes where a is not in [lo, hi): NaN,
// below lo, or hi and above. With AVX-512 it takes one opmask register
// per chain (a compare masked by the first, then its complement).
func outside(a V, lo, hi float64) M {
	if !wide {
		return mor(scmp(cmpNGE, a, cs(lo)), scmp(cmpNLT, a, cs(hi)))
	}
	in, m := scmp(cmpGE, a, cs(lo)), make(M, U)
	for i := range m {
		bc(VCMPPS, VCMPPS_BCST)(U8(cmpLT), cs(hi), a[i], in[i], in[i])
		m[i] = K()
		KNOTW(in[i], m[i])
	}
	return m
}

// mor returns a | b.
func mor(a, b M) M {
	m := make(M, U)
	for i := range m {
		if wide {
			m[i] = K()
			KORW(b[i], a[i], m[i])
		} else {
			m[i] = YMM()
			VORPS(b[i], a[i], m[i])
		}
	}
	return m
}

// signOf is the mask of lanes whose sign bit is set.
func signOf(a V) M {
	m := make(M, U)
	for i := range m {
		if wide {
			m[i] = K()
			VPMOVD2M(a[i], m[i])
		} else {
			m[i] = a[i]
		}
	}
	return m
}

// sblend returns m ? b : a lane by lane.
func sblend(m M, a, b arg) V {
	r := newS()
	if wide {
		r = f32.copy(a)
		for i := range r {
			VBLENDMPS(at(b, i), r[i], m[i], r[i])
		}
		return r
	}
	ra, rb := sreg(a), sreg(b)
	for i := range r {
		VBLENDVPS(m[i], rb[i], ra[i], r[i])
	}
	return r
}

// keepOnly returns a where m is set, +0 elsewhere. With AVX2, m must be a
// full-lane mask (from scmp).
func keepOnly(m M, a V) V {
	r := newS()
	for i := range r {
		if wide {
			VMOVAPS_Z(a[i], m[i], r[i])
		} else {
			VANDPS(m[i], a[i], r[i])
		}
	}
	return r
}

// table16 returns, per lane, row[idx & 15] of the 16-entry row at m. With
// AVX2 it needs hi, the lanes whose idx ≥ 8 (idx << 28: bit 3 in the sign).
func table16(m Mem, idx, hi V) V {
	r := newS()
	for i := range r {
		if wide {
			VPERMPS(m, idx[i], r[i])
			continue
		}
		lo, up := YMM(), YMM()
		VPERMPS(m, idx[i], lo)
		VPERMPS(m.Offset(32), idx[i], up)
		VBLENDVPS(hi[i], up, lo, r[i])
	}
	return r
}

// table8 returns row[idx & 7] from a row whose 16 entries repeat with
// period 8.
func table8(m Mem, idx V) V { return f32.unary(VPERMPS, idx, m) }

// twoSumS returns s = a + b and its exact rounding error (Knuth).
func twoSumS(a, b arg) (s, e V) {
	s = sadd(a, b)
	bb := ssub(s, a)
	return s, sadd(ssub(a, ssub(s, bb)), ssub(b, bb))
}

// fast2Sum returns a + b as hi + lo, exactly, when |a| ≥ |b| or a = 0.
func fast2Sum(a, b V) (V, V) {
	s := sadd(a, b)
	return s, ssub(b, ssub(s, a))
}

// ddMulS multiplies hi + lo pairs: (ah + al)(bh + bl) as an unnormalized
// pair (ah·bh, its error + ah·bl + al·bh); al·bl is dropped.
func ddMulS(ah, al, bh, bl V) (V, V) {
	p := smul(ah, bh)
	e := sfms(ah, bh, p)
	e = sfma(ah, bl, sfma(al, bh, e))
	return p, e
}

// srl is the 32-bit logical right shift of each lane.
func srl(a V, n uint8) V { return f32.unary(VPSRLD, a, U8(n)) }

// scalefS returns a·2^floor(b) (AVX-512).
func scalefS(a, b arg) V { return sop3(bc(VSCALEFPS, VSCALEFPS_BCST), a, b) }

// rows32 keeps one copy of each 32-entry table.
var rows32 = map[[32]float32]Mem{}

// row32 stores 32 float32 (a table row, in two consecutive 64-byte
// halves) and returns the address of the first.
func row32(v []float32) Mem {
	key := [32]float32(v)
	if m, ok := rows32[key]; ok {
		return m
	}
	var w [16]uint64
	for i := range w {
		w[i] = uint64(math.Float32bits(v[2*i])) | uint64(math.Float32bits(v[2*i+1]))<<32
	}
	m := consts.vec8([8]uint64(w[:8]))
	consts.vec8([8]uint64(w[8:]))
	rows32[key] = m
	return m
}

// table32 returns, per lane, row[idx & 31] of the 32-entry row at m
// (AVX-512: one VPERMT2PS on a copy of the first half).
func table32(m Mem, idx V) V {
	r := f32.copy(m)
	for i := range r {
		VPERMT2PS(m.Offset(64), idx[i], r[i])
	}
	return r
}

// subWhere returns m ? a − b : old lane by lane (AVX-512 merge masking; a
// in a register).
func subWhere(m M, old V, a, b arg) V {
	r, ra := f32.copy(old), sreg(a)
	for i := range r {
		VSUBPS(at(b, i), ra[i], m[i], r[i])
	}
	return r
}

// orSignOf returns a with the sign bit of s or-ed in.
func orSignOf(a, s V) V { return sop3(VORPS, a, sand(s, csi(0x80000000))) }
