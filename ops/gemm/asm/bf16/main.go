// Command bf16 generates ops/gemm/bf16_amd64.s and bf16_stubs_amd64.go,
// the kernels of package gemm's bf16 matrix product:
//
//	cd ops/gemm/asm && go run ./bf16 -out ../bf16_amd64.s -stubs ../bf16_stubs_amd64.go -pkg gemm
//
// (go generate ./ops/gemm runs this.) Go's assembler has no AVX512_BF16 or
// AMX mnemonics, so those instructions are emitted as bytes (enc.go), each
// after a comment with its GNU syntax that the package's tests assemble.
//
// The packed layouts (see ops/gemm/bf16_gemm.go): a panel of w columns of a
// k×w matrix Y holds, for each pair of steps p2, the w dwords
// pair(Y[2p2][j], Y[2p2+1][j]) = bf16(Y[2p2][j]) | bf16(Y[2p2+1][j])<<16,
// which is what VDPBF16PS multiplies lane by lane and what AMX calls the
// VNNI layout of B.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/geluproject/gelu/ops/gemm/asm/internal/avx512"
)

// zmm are the 512-bit registers by number, for the kernels that encode
// some instructions themselves (register numbers must then be fixed).
var zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9,
	reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20,
	reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}

// The AVX512_BF16 micro-kernel's tile: mr rows of nv vectors of 16 floats.
const (
	mr     = 12
	nv     = 2
	nr     = 16 * nv
	unroll = 4 // pair steps per iteration of the main loop
)

func main() {
	ConstraintExpr("amd64,!noasm")
	pairIdx := pairIndex()
	kernelAVX512()
	packRows(pairIdx)
	packCols()
	packRowsH(pairIndexH())
	packColsH()
	fromF32()
	toF32()
	peak()
	dot16()
	kernelAMX()
	Generate()
}

// pairIndex is VPERMW's table that interleaves the two halves of a zmm of
// 32 words: word 2j ← word j, word 2j+1 ← word 16+j.
func pairIndex() Mem {
	m := GLOBL("bf16PairIdx", RODATA|NOPTR)
	for j := 0; j < 16; j++ {
		DATA(4*j, U16(j))
		DATA(4*j+2, U16(16+j))
	}
	return m
}

// pairIndexH is VPERMI2W's table that interleaves two zmm of 32 words x
// (indexes 0–31) and y (32–63) into 32 pairs: dword j of the first output
// is x[j] | y[j]<<16 for j < 16 (words 0–31 of the table), of the second
// for j = 16…31 (words 32–63).
func pairIndexH() Mem {
	m := GLOBL("bf16PairIdxH", RODATA|NOPTR)
	for j := 0; j < 32; j++ {
		DATA(4*j, U16(j))
		DATA(4*j+2, U16(32+j))
	}
	return m
}

// daz makes the bfloat16 subnormals among the 32 words of x zeros of their
// sign, as the instructions that read bfloat16 treat them: words whose
// exponent bits (expMask) are all zero keep only their sign bit (signMask).
func daz(x, expMask, signMask, tmp reg.VecPhysical) {
	VPTESTMW(expMask, x, reg.K5)
	VPANDD(signMask, x, tmp)
	VMOVDQU16(x, reg.K5, tmp)
	VMOVDQA64(tmp, x)
}

// dazConstants broadcasts the word masks daz uses.
func dazConstants(expMask, signMask reg.VecPhysical) {
	t := GP32()
	MOVL(U32(0x7f80), t)
	VPBROADCASTW(t, expMask)
	MOVL(U32(0x8000), t)
	VPBROADCASTW(t, signMask)
}

// packRowsH generates bf16PackRowsH, bf16PackRowsS for bfloat16 sources:
// rows of 32 words (lanes in lmask read), two rows interleaved into 32
// pairs by VPERMI2W, subnormals made zero.
func packRowsH(idx Mem) {
	TEXT("bf16PackRowsH", NOSPLIT, "func(dst *uint32, w int, src *uint16, ld, rows int, lmask, smask uint32)")
	Pragma("noescape")
	Doc("bf16PackRowsH is bf16PackRowsS for bfloat16 rows (ld apart): ceil(rows/2) rows of pairs, w dwords apart, subnormals made zero.")
	dst, w, src, ld, rows, m := GP64(), GP64(), GP64(), GP64(), GP64(), GP32()
	Load(Param("dst"), dst)
	Load(Param("w"), w)
	Load(Param("src"), src)
	Load(Param("ld"), ld)
	Load(Param("rows"), rows)
	SHLQ(Imm(2), w)
	SHLQ(Imm(1), ld)
	Load(Param("lmask"), m)
	KMOVD(m, reg.K1)
	Load(Param("smask"), m)
	KMOVW(m, reg.K3)
	SHRL(Imm(16), m)
	KMOVW(m, reg.K4)
	lo, hi := zmm[28], zmm[29]
	VMOVDQU16(idx, lo)
	VMOVDQU16(Mem{Base: idx.Base, Disp: idx.Disp + 64, Symbol: idx.Symbol}, hi)
	expMask, signMask := zmm[30], zmm[31]
	dazConstants(expMask, signMask)
	r1, ld2 := GP64(), GP64()
	MOVQ(ld, ld2)
	SHLQ(Imm(1), ld2)
	body := func(odd bool) {
		VMOVDQU16_Z(Mem{Base: src}, reg.K1, zmm[0])
		daz(zmm[0], expMask, signMask, zmm[4])
		if odd {
			VPXORD(zmm[1], zmm[1], zmm[1])
		} else {
			MOVQ(src, r1)
			ADDQ(ld, r1)
			VMOVDQU16_Z(Mem{Base: r1}, reg.K1, zmm[1])
			daz(zmm[1], expMask, signMask, zmm[4])
		}
		VMOVDQA64(lo, zmm[2])
		VMOVDQA64(hi, zmm[3])
		// Intel's VPERMI2W idx, x, y is avo's VPERMI2W(y, x, idx).
		VPERMI2W(zmm[1], zmm[0], zmm[2])
		VPERMI2W(zmm[1], zmm[0], zmm[3])
		VMOVDQU32(zmm[2], reg.K3, Mem{Base: dst})
		VMOVDQU32(zmm[3], reg.K4, Mem{Base: dst, Disp: 64})
	}
	Label("pairs")
	CMPQ(rows, Imm(2))
	JL(LabelRef("odd"))
	body(false)
	ADDQ(w, dst)
	ADDQ(ld2, src)
	SUBQ(Imm(2), rows)
	JMP(LabelRef("pairs"))
	Label("odd")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	body(true)
	Label("done")
	VZEROUPPER()
	RET()
}

// packColsH generates bf16PackColsH16, bf16PackColsS16 for bfloat16
// sources: 32 steps of a row are 16 pairs already, loaded as one zmm
// (subnormals made zero) and transposed; tailMask has a bit per step.
func packColsH() {
	TEXT("bf16PackColsH16", NOSPLIT, "func(dst *uint32, w int, src *uint16, ld, rows, chunks int, tailMask uint32, tailPairs int, smask uint16)")
	Pragma("noescape")
	Doc("bf16PackColsH16 is bf16PackColsS16 for bfloat16 rows: up to 16 rows (ld apart, k along each row) into rows of pairs, w dwords apart.")
	dst, w, src, ld, rows, n := GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("dst"), dst)
	Load(Param("w"), w)
	Load(Param("src"), src)
	Load(Param("ld"), ld)
	Load(Param("rows"), rows)
	Load(Param("chunks"), n)
	SHLQ(Imm(2), w)
	SHLQ(Imm(1), ld)
	m := GP32()
	Load(Param("smask"), m)
	KMOVW(m, reg.K3)
	KXNORD(reg.K1, reg.K1, reg.K1)
	row, out := GP64(), GP64()
	r, t := zmm[:16], zmm[16:]
	expMask, signMask := t[14], t[15]
	body := func(name string, pairs reg.GPVirtual) {
		dazConstants(expMask, signMask)
		for i := 0; i < 16; i++ {
			VPXORD(r[i], r[i], r[i])
		}
		MOVQ(src, row)
		for i := 0; i < 16; i++ {
			CMPQ(rows, Imm(uint64(i)))
			JLE(LabelRef(name + "_loaded"))
			VMOVDQU16_Z(Mem{Base: row}, reg.K1, r[i])
			daz(r[i], expMask, signMask, t[0])
			if i < 15 {
				ADDQ(ld, row)
			}
		}
		Label(name + "_loaded")
		avx512.Transpose16(r, t)
		MOVQ(dst, out)
		for i := 0; i < 16; i++ {
			if pairs != nil {
				CMPQ(pairs, Imm(uint64(i)))
				JLE(LabelRef(name + "_stored"))
			}
			VMOVDQU32(r[i], reg.K3, Mem{Base: out})
			ADDQ(w, out)
		}
		if pairs != nil {
			Label(name + "_stored")
		}
	}
	Label("chunk")
	TESTQ(n, n)
	JZ(LabelRef("tail"))
	body("full", nil)
	MOVQ(w, out)
	SHLQ(Imm(4), out)
	ADDQ(out, dst)
	ADDQ(Imm(64), src)
	DECQ(n)
	JMP(LabelRef("chunk"))
	Label("tail")
	Load(Param("tailMask"), m)
	TESTL(m, m)
	JZ(LabelRef("done"))
	KMOVD(m, reg.K1)
	pairs := GP64()
	Load(Param("tailPairs"), pairs)
	body("part", pairs)
	Label("done")
	VZEROUPPER()
	RET()
}

// kernelAVX512 generates bf16KernAVX512, the 12×32 tile
// c = alpha·(a·b) + beta·c from a packed A panel (kp pair steps of 12
// dwords) and a packed B panel (kp pair steps of 32 dwords). Each step
// broadcasts one dword of A (two bf16 of a row) and feeds it with the two
// B vectors to VDPBF16PS: 24 accumulators, 2 B registers, 2 broadcasts.
// The epilogue rounds as the portable kernel does: t = alpha·acc, then
// c = t + beta·c with beta·c rounded first (c not read when beta == 0).
func kernelAVX512() {
	TEXT("bf16KernAVX512", NOSPLIT, "func(kp int, a, b *uint32, c *float32, ldc int, alpha, beta float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("bf16KernAVX512 computes the %d×%d tile c = alpha·a·b + beta·c from packed bf16 pair panels (c not read when beta == 0).", mr, nr))
	kr, ap, bp, cp, ldc := GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("kp"), kr)
	Load(Param("a"), ap)
	Load(Param("b"), bp)
	Load(Param("c"), cp)
	Load(Param("ldc"), ldc)
	SHLQ(Imm(2), ldc)
	acc := func(i, v int) int { return i*nv + v }
	const bReg, bcReg = mr * nv, mr*nv + nv
	for i := 0; i < mr*nv; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	step := func(u int) {
		for v := 0; v < nv; v++ {
			VMOVDQU32(Mem{Base: bp, Disp: (u*nr + 16*v) * 4}, zmm[bReg+v])
		}
		for i := 0; i < mr; i++ {
			bc := bcReg + i%2
			VPBROADCASTD(Mem{Base: ap, Disp: (u*mr + i) * 4}, zmm[bc])
			for v := 0; v < nv; v++ {
				emit(vdpbf16ps(acc(i, v), bReg+v, bc))
			}
		}
	}
	Comment("main loop: unroll pair steps at a time")
	CMPQ(kr, Imm(unroll))
	JL(LabelRef("tail"))
	Label("main")
	for u := 0; u < unroll; u++ {
		step(u)
	}
	ADDQ(U32(unroll*mr*4), ap)
	ADDQ(U32(unroll*nr*4), bp)
	SUBQ(Imm(unroll), kr)
	CMPQ(kr, Imm(unroll))
	JGE(LabelRef("main"))
	Label("tail")
	TESTQ(kr, kr)
	JZ(LabelRef("store"))
	Label("tailloop")
	step(0)
	ADDQ(U32(mr*4), ap)
	ADDQ(U32(nr*4), bp)
	DECQ(kr)
	JNZ(LabelRef("tailloop"))

	Label("store")
	alpha, beta, tmp := zmm[bReg], zmm[bReg+1], zmm[bcReg]
	VBROADCASTSS(avx512.ParamAddr("alpha"), alpha)
	VBROADCASTSS(avx512.ParamAddr("beta"), beta)
	for i := 0; i < mr*nv; i++ {
		VMULPS(alpha, zmm[i], zmm[i])
	}
	zeroX := zmm[bcReg+1].AsX()
	VXORPS(zeroX, zeroX, zeroX)
	VUCOMISS(zeroX, beta.AsX())
	JNE(LabelRef("withbeta"))
	JP(LabelRef("withbeta"))
	Comment("beta == 0: c is not read, so NaNs in it do not propagate")
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VMOVUPS(zmm[acc(i, v)], Mem{Base: cp, Disp: 64 * v})
		}
		if i < mr-1 {
			ADDQ(ldc, cp)
		}
	}
	VZEROUPPER()
	RET()
	Label("withbeta")
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VMULPS(Mem{Base: cp, Disp: 64 * v}, beta, tmp)
			VADDPS(tmp, zmm[acc(i, v)], zmm[acc(i, v)])
			VMOVUPS(zmm[acc(i, v)], Mem{Base: cp, Disp: 64 * v})
		}
		if i < mr-1 {
			ADDQ(ldc, cp)
		}
	}
	VZEROUPPER()
	RET()
}

// packRows generates bf16PackRowsS: the panel of a matrix Y stored with
// its k steps as rows (row p at src + p·ld floats). It writes ceil(rows/2)
// pair rows of dst, w dwords apart: lane j of pair row p2 is
// pair(Y[2p2][j], Y[2p2+1][j]) for the lanes set in lmask (zero
// elsewhere), stored for the lanes set in smask (32 lanes: two vectors of
// 16). A missing last row (rows odd) counts as zeros.
func packRows(pairIdx Mem) {
	TEXT("bf16PackRowsS", NOSPLIT, "func(dst *uint32, w int, src *float32, ld, rows int, lmask, smask uint32)")
	Pragma("noescape")
	Doc("bf16PackRowsS packs rows rows of float32 (ld apart) into ceil(rows/2) rows of bf16 pairs, w dwords apart, reading the lanes in lmask and storing those in smask.")
	dst, w, src, ld, rows, m := GP64(), GP64(), GP64(), GP64(), GP64(), GP32()
	Load(Param("dst"), dst)
	Load(Param("w"), w)
	Load(Param("src"), src)
	Load(Param("ld"), ld)
	Load(Param("rows"), rows)
	SHLQ(Imm(2), w)
	SHLQ(Imm(2), ld)
	Load(Param("lmask"), m)
	KMOVW(m, reg.K1)
	SHRL(Imm(16), m)
	KMOVW(m, reg.K2)
	Load(Param("smask"), m)
	KMOVW(m, reg.K3)
	SHRL(Imm(16), m)
	KMOVW(m, reg.K4)
	VMOVDQU16(pairIdx, zmm[31])
	r1, ld2 := GP64(), GP64()
	MOVQ(ld, ld2)
	SHLQ(Imm(1), ld2)
	body := func(odd bool) {
		VMOVUPS_Z(Mem{Base: src}, reg.K1, zmm[0])
		VMOVUPS_Z(Mem{Base: src, Disp: 64}, reg.K2, zmm[2])
		if odd {
			VPXORD(zmm[1], zmm[1], zmm[1])
			VPXORD(zmm[3], zmm[3], zmm[3])
		} else {
			MOVQ(src, r1)
			ADDQ(ld, r1)
			VMOVUPS_Z(Mem{Base: r1}, reg.K1, zmm[1])
			VMOVUPS_Z(Mem{Base: r1, Disp: 64}, reg.K2, zmm[3])
		}
		emit(vcvtne2ps2bf16(4, 1, 0))
		emit(vcvtne2ps2bf16(5, 3, 2))
		VPERMW(zmm[4], zmm[31], zmm[4])
		VPERMW(zmm[5], zmm[31], zmm[5])
		VMOVDQU32(zmm[4], reg.K3, Mem{Base: dst})
		VMOVDQU32(zmm[5], reg.K4, Mem{Base: dst, Disp: 64})
	}
	Label("pairs")
	CMPQ(rows, Imm(2))
	JL(LabelRef("odd"))
	body(false)
	ADDQ(w, dst)
	ADDQ(ld2, src)
	SUBQ(Imm(2), rows)
	JMP(LabelRef("pairs"))
	Label("odd")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	body(true)
	Label("done")
	VZEROUPPER()
	RET()
}

// packCols generates bf16PackColsS16: the panel of a matrix Y stored with
// its k steps along rows of src, Y[p][j] = src[j·ld + p], for rows ≤ 16
// columns j. Each chunk of 32 steps becomes 16 pair rows of dst (w dwords
// apart, the lanes in smask stored): 16 source rows are loaded and
// converted (one zmm of 16 pairs each), then transposed in registers as
// ownTrans16S does. chunks full chunks are followed, when tailMask is not
// 0, by one whose steps are the bits of tailMask and which stores
// tailPairs pair rows.
func packCols() {
	TEXT("bf16PackColsS16", NOSPLIT, "func(dst *uint32, w int, src *float32, ld, rows, chunks int, tailMask uint32, tailPairs int, smask uint16)")
	Pragma("noescape")
	Doc("bf16PackColsS16 packs up to 16 float32 rows (ld apart, k along each row) into rows of bf16 pairs, w dwords apart: chunks of 32 steps, then a partial one (tailMask, tailPairs).")
	dst, w, src, ld, rows, n := GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("dst"), dst)
	Load(Param("w"), w)
	Load(Param("src"), src)
	Load(Param("ld"), ld)
	Load(Param("rows"), rows)
	Load(Param("chunks"), n)
	SHLQ(Imm(2), w)
	SHLQ(Imm(2), ld)
	m := GP32()
	Load(Param("smask"), m)
	KMOVW(m, reg.K3)
	KXNORW(reg.K1, reg.K1, reg.K1)
	KXNORW(reg.K2, reg.K2, reg.K2)
	row, out := GP64(), GP64()
	r, t := zmm[:16], zmm[16:]
	body := func(name string, pairs reg.GPVirtual) {
		for i := 0; i < 16; i++ {
			VPXORD(r[i], r[i], r[i])
		}
		MOVQ(src, row)
		for i := 0; i < 16; i++ {
			CMPQ(rows, Imm(uint64(i)))
			JLE(LabelRef(name + "_loaded"))
			VMOVUPS_Z(Mem{Base: row}, reg.K1, t[0])
			VMOVUPS_Z(Mem{Base: row, Disp: 64}, reg.K2, t[1])
			emit(vcvtne2ps2bf16(i, 17, 16))
			if i < 15 {
				ADDQ(ld, row)
			}
		}
		Label(name + "_loaded")
		avx512.Transpose16(r, t)
		MOVQ(dst, out)
		for i := 0; i < 16; i++ {
			if pairs != nil {
				CMPQ(pairs, Imm(uint64(i)))
				JLE(LabelRef(name + "_stored"))
			}
			VMOVDQU32(r[i], reg.K3, Mem{Base: out})
			ADDQ(w, out)
		}
		if pairs != nil {
			Label(name + "_stored")
		}
	}
	Label("chunk")
	TESTQ(n, n)
	JZ(LabelRef("tail"))
	body("full", nil)
	MOVQ(w, out)
	SHLQ(Imm(4), out)
	ADDQ(out, dst)
	ADDQ(Imm(128), src)
	DECQ(n)
	JMP(LabelRef("chunk"))
	Label("tail")
	Load(Param("tailMask"), m)
	TESTL(m, m)
	JZ(LabelRef("done"))
	KMOVW(m, reg.K1)
	SHRL(Imm(16), m)
	KMOVW(m, reg.K2)
	pairs := GP64()
	Load(Param("tailPairs"), pairs)
	body("part", pairs)
	Label("done")
	VZEROUPPER()
	RET()
}

// fromF32 generates bf16FromF32s: dst[i] = bf16(src[i]) for n a multiple
// of 32, rounding to nearest even (VCVTNE2PS2BF16).
func fromF32() {
	TEXT("bf16FromF32s", NOSPLIT, "func(dst *uint16, src *float32, n int)")
	Pragma("noescape")
	Doc("bf16FromF32s rounds n float32 (a multiple of 32) to bf16.")
	dst, src, n := GP64(), GP64(), GP64()
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("n"), n)
	SHRQ(Imm(5), n)
	JZ(LabelRef("done"))
	Label("loop")
	VMOVUPS(Mem{Base: src}, zmm[0])
	VMOVUPS(Mem{Base: src, Disp: 64}, zmm[1])
	emit(vcvtne2ps2bf16(2, 1, 0))
	VMOVDQU16(zmm[2], Mem{Base: dst})
	ADDQ(Imm(128), src)
	ADDQ(Imm(64), dst)
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// toF32 generates bf16ToF32s: dst[i] = float32 of bf16 src[i] (exact: the
// bits move up 16 places), n a multiple of 16.
func toF32() {
	TEXT("bf16ToF32s", NOSPLIT, "func(dst *float32, src *uint16, n int)")
	Pragma("noescape")
	Doc("bf16ToF32s widens n bf16 (a multiple of 16) to float32.")
	dst, src, n := GP64(), GP64(), GP64()
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("n"), n)
	SHRQ(Imm(4), n)
	JZ(LabelRef("done"))
	Label("loop")
	VPMOVZXWD(Mem{Base: src}, zmm[0])
	VPSLLD(Imm(16), zmm[0], zmm[0])
	VMOVUPS(zmm[0], Mem{Base: dst})
	ADDQ(Imm(32), src)
	ADDQ(Imm(64), dst)
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// dot16 generates bf16Dot16, one VDPBF16PS on 16 lanes of memory: the
// tests compare the portable kernel's arithmetic (bf16Dot2) with it.
func dot16() {
	TEXT("bf16Dot16", NOSPLIT, "func(acc *float32, a, b *uint32)")
	Pragma("noescape")
	Doc("bf16Dot16 sets acc[i] to VDPBF16PS's lane i of acc[i] and the pairs a[i], b[i], i < 16.")
	acc, a, b := GP64(), GP64(), GP64()
	Load(Param("acc"), acc)
	Load(Param("a"), a)
	Load(Param("b"), b)
	VMOVUPS(Mem{Base: acc}, zmm[0])
	VMOVDQU32(Mem{Base: a}, zmm[1])
	VMOVDQU32(Mem{Base: b}, zmm[2])
	emit(vdpbf16ps(0, 1, 2))
	VMOVUPS(zmm[0], Mem{Base: acc})
	VZEROUPPER()
	RET()
}

// Peak loop constants, mirrored by bf16PeakAccs and bf16PeakUnroll in
// ../../bf16_peak.go.
const (
	peakAccs   = 24
	peakUnroll = 2
)

// peak generates bf16PeakAVX512: n iterations of peakUnroll·peakAccs
// independent VDPBF16PS on registers, the bf16 counterpart of the FMA
// loops of ./peak (24 chains: enough for a latency of 6 cycles at 2 per
// cycle, and the kernel's 24 accumulators).
func peak() {
	TEXT("bf16PeakAVX512", NOSPLIT, "func(n int)")
	Doc(fmt.Sprintf("bf16PeakAVX512 runs n iterations of %d VDPBF16PS on %d accumulators.", peakAccs*peakUnroll, peakAccs))
	n := GP64()
	Load(Param("n"), n)
	for i := 0; i < peakAccs+2; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	TESTQ(n, n)
	JZ(LabelRef("done"))
	Label("loop")
	for u := 0; u < peakUnroll; u++ {
		for i := 0; i < peakAccs; i++ {
			emit(vdpbf16ps(i, peakAccs, peakAccs+1))
		}
	}
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// GP register numbers for the AMX kernel, whose tile loads and stores are
// encoded here and so need fixed registers (all below r8, none rsp/rbp).
const (
	rAX, rCX, rDX, rBX, rSI, rDI = 0, 1, 2, 3, 6, 7
)

// kernelAMX generates bf16KernAMX, the 32×32 tile c = alpha·a·b + beta·c
// on AMX: four 16×16 float32 accumulator tiles (tmm0–3), two A tiles of
// 16 rows × 16 pairs (tmm4–5: rows 0–15 and 16–31 of the A panel, which
// is row-major, lda pairs per row) and two B tiles of 16 pair rows × 16
// columns (tmm6–7: columns 0–15 and 16–31 of the packed B panel, 32
// dwords per pair row). kp16 steps of 16 pairs. The tile configuration
// (cfg, 64 bytes) is loaded on entry and released before the epilogue,
// which stores the tiles to tmp (32×32 floats) and combines them with c
// in AVX-512 as bf16KernAVX512 does.
func kernelAMX() {
	TEXT("bf16KernAMX", NOSPLIT, "func(kp16 int, a *uint32, lda int, b *uint32, c *float32, ldc int, alpha, beta float32, cfg *byte, tmp *float32)")
	Pragma("noescape")
	Doc("bf16KernAMX computes the 32×32 tile c = alpha·a·b + beta·c from a row-major A panel (lda pairs per row) and a packed B panel with AMX-BF16 (c not read when beta == 0). Needs XTILEDATA permission (arch_prctl).")
	// Physical registers only: avo cannot see the registers the encoded
	// instructions use, so it must not allocate any.
	n, cp, ldc, rows := reg.R8, reg.R9, reg.R10, reg.R11
	Load(Param("kp16"), n)
	Load(Param("cfg"), reg.RAX)
	emit(ldtilecfg(rAX))
	for tt := 0; tt < 4; tt++ {
		emit(tilezero(tt))
	}
	Load(Param("a"), reg.RSI)
	Load(Param("lda"), reg.RBX)
	SHLQ(Imm(2), reg.RBX) // bytes per A row
	MOVQ(reg.RBX, reg.RDI)
	SHLQ(Imm(4), reg.RDI)
	ADDQ(reg.RSI, reg.RDI) // rows 16–31
	Load(Param("b"), reg.RDX)
	LEAQ(Mem{Base: reg.RDX, Disp: 64}, reg.RAX) // columns 16–31
	MOVQ(U32(nr*4), reg.RCX)                    // bytes per B pair row
	TESTQ(n, n)
	JZ(LabelRef("stored"))
	Label("loop")
	emit(tileloadd(4, rSI, rBX))
	emit(tileloadd(5, rDI, rBX))
	emit(tileloadd(6, rDX, rCX))
	emit(tileloadd(7, rAX, rCX))
	emit(tdpbf16ps(0, 4, 6))
	emit(tdpbf16ps(1, 4, 7))
	emit(tdpbf16ps(2, 5, 6))
	emit(tdpbf16ps(3, 5, 7))
	ADDQ(Imm(64), reg.RSI)
	ADDQ(Imm(64), reg.RDI)
	ADDQ(U32(16*nr*4), reg.RDX)
	ADDQ(U32(16*nr*4), reg.RAX)
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("stored")
	Load(Param("tmp"), reg.RAX)
	LEAQ(Mem{Base: reg.RAX, Disp: 64}, reg.RSI)
	LEAQ(Mem{Base: reg.RAX, Disp: 16 * nr * 4}, reg.RDI)
	LEAQ(Mem{Base: reg.RAX, Disp: 16*nr*4 + 64}, reg.RDX)
	emit(tilestored(0, rAX, rCX))
	emit(tilestored(1, rSI, rCX))
	emit(tilestored(2, rDI, rCX))
	emit(tilestored(3, rDX, rCX))
	emit(tilerelease())

	Load(Param("c"), cp)
	Load(Param("ldc"), ldc)
	SHLQ(Imm(2), ldc)
	alpha, beta, x, y := zmm[0], zmm[1], zmm[2], zmm[3]
	VBROADCASTSS(avx512.ParamAddr("alpha"), alpha)
	VBROADCASTSS(avx512.ParamAddr("beta"), beta)
	zeroX := zmm[4].AsX()
	VXORPS(zeroX, zeroX, zeroX)
	VUCOMISS(zeroX, beta.AsX())
	MOVQ(U32(32), rows)
	JNE(LabelRef("withbeta"))
	JP(LabelRef("withbeta"))
	Label("row0")
	for v := 0; v < 2; v++ {
		VMULPS(Mem{Base: reg.RAX, Disp: 64 * v}, alpha, x)
		VMOVUPS(x, Mem{Base: cp, Disp: 64 * v})
	}
	ADDQ(U32(nr*4), reg.RAX)
	ADDQ(ldc, cp)
	DECQ(rows)
	JNZ(LabelRef("row0"))
	VZEROUPPER()
	RET()
	Label("withbeta")
	for v := 0; v < 2; v++ {
		VMULPS(Mem{Base: reg.RAX, Disp: 64 * v}, alpha, x)
		VMULPS(Mem{Base: cp, Disp: 64 * v}, beta, y)
		VADDPS(y, x, x)
		VMOVUPS(x, Mem{Base: cp, Disp: 64 * v})
	}
	ADDQ(U32(nr*4), reg.RAX)
	ADDQ(ldc, cp)
	DECQ(rows)
	JNZ(LabelRef("withbeta"))
	VZEROUPPER()
	RET()
}
