// Package avx512 holds the code generation the assembly generators of
// package gemm share (own GEMM: ../.., bfloat16: ../../bf16). Its
// functions emit into avo's one build context, like the generators' own.
package avx512

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Transpose16 transposes the 16×16 dwords in r (r[i] = row i) in place,
// with the 16 registers of t as scratch: unpacks of dword and qword pairs,
// then 128-bit lane shuffles. Intel's op(dst, a, b) is avo's op(b, a, dst).
func Transpose16(r, t []reg.VecPhysical) {
	for i := 0; i < 8; i++ {
		VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	for i := 0; i < 4; i++ {
		VUNPCKLPD(t[4*i+2], t[4*i], r[4*i])
		VUNPCKHPD(t[4*i+2], t[4*i], r[4*i+1])
		VUNPCKLPD(t[4*i+3], t[4*i+1], r[4*i+2])
		VUNPCKHPD(t[4*i+3], t[4*i+1], r[4*i+3])
	}
	for h := 0; h < 2; h++ {
		for i := 0; i < 4; i++ {
			a, b := r[8*h+i], r[8*h+i+4]
			VSHUFF32X4(Imm(0x88), b, a, t[8*h+i])
			VSHUFF32X4(Imm(0xdd), b, a, t[8*h+i+4])
		}
	}
	for i := 0; i < 8; i++ {
		VSHUFF32X4(Imm(0x88), t[i+8], t[i], r[i])
		VSHUFF32X4(Imm(0xdd), t[i+8], t[i], r[i+8])
	}
}

// ParamAddr is the frame address of the current function's scalar
// argument name.
func ParamAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}
