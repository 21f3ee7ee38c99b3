package main

// Byte encodings of the instructions Go's assembler does not know
// (AVX512_BF16 and AMX-TILE/AMX-BF16): the generator emits them as BYTE
// directives, each run preceded by a comment with the instruction in GNU
// (AT&T) syntax, from which package gemm's TestBF16EncodingsMatchGNUAs
// re-derives the bytes with `as --64` and `objdump -d`.

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
)

// Prefix bytes of the SIMD prefix field (pp) and the opcode map (mmmmm).
const (
	ppNone, pp66, ppF3, ppF2 = 0, 1, 2, 3
	map0F38                  = 2
)

// evex512 encodes a 512-bit EVEX instruction of map 0F38 with W0, no mask,
// register operands only, in Intel order: op dst, src1, src2 with dst in
// ModRM.reg, src1 in EVEX.vvvv (0 when the form has none: vvvv = 1111) and
// src2 in ModRM.rm. Registers are zmm0–zmm31.
func evex512(pp, opcode byte, dst, src1, src2 int) []byte {
	for _, r := range []int{dst, src1, src2} {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("zmm%d", r))
		}
	}
	// P0: R X B R' 0 0 m m, R/X/B/R' stored inverted. For a register
	// operand in rm, EVEX.X is its bit 4 and EVEX.B its bit 3.
	p0 := byte(map0F38)
	if dst&8 == 0 {
		p0 |= 0x80
	}
	if src2&16 == 0 {
		p0 |= 0x40
	}
	if src2&8 == 0 {
		p0 |= 0x20
	}
	if dst&16 == 0 {
		p0 |= 0x10
	}
	// P1: W vvvv 1 pp, vvvv inverted.
	p1 := byte(^src1&15)<<3 | 0x04 | pp
	// P2: z L'L b V' aaa: 512-bit (L'L = 10), V' inverted bit 4 of src1.
	p2 := byte(0x40)
	if src1&16 == 0 {
		p2 |= 0x08
	}
	modrm := 0xc0 | byte(dst&7)<<3 | byte(src2&7)
	return []byte{0x62, p0, p1, p2, opcode, modrm}
}

// vex3 encodes a three-byte-VEX instruction of map 0F38, W0, L0:
// c4 [R X B mmmmm] [W vvvv L pp] opcode modrm [sib].
func vex3(pp, opcode byte, r, x, b, vvvv int, modrm []byte) []byte {
	b1 := byte(map0F38)
	if r&8 == 0 {
		b1 |= 0x80
	}
	if x&8 == 0 {
		b1 |= 0x40
	}
	if b&8 == 0 {
		b1 |= 0x20
	}
	b2 := byte(^vvvv&15)<<3 | pp
	return append([]byte{0xc4, b1, b2, opcode}, modrm...)
}

// gpNames are the 64-bit general registers by number, in GNU syntax.
var gpNames = []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// sibMem is the ModRM and SIB of (base, index, 1) with no displacement;
// base may not be rbp or r13 (they need a displacement) and index not rsp.
func sibMem(reg, base, index int) []byte {
	if base&7 == 5 || index == 4 {
		panic("sibMem: rbp/r13 base or rsp index")
	}
	return []byte{byte(reg&7)<<3 | 4, byte(index&7)<<3 | byte(base&7)}
}

// baseMem is the ModRM of (base) with no displacement.
func baseMem(reg, base int) []byte {
	if base&7 == 4 || base&7 == 5 {
		panic("baseMem: rsp/rbp-like base")
	}
	return []byte{byte(reg&7)<<3 | byte(base&7)}
}

// encoded is one instruction: its GNU syntax and its bytes.
type encoded struct {
	att   string
	bytes []byte
}

func vdpbf16ps(dst, src1, src2 int) encoded {
	return encoded{fmt.Sprintf("vdpbf16ps %%zmm%d,%%zmm%d,%%zmm%d", src2, src1, dst), evex512(ppF3, 0x52, dst, src1, src2)}
}

// vcvtne2ps2bf16 converts lo (the low 16 words of dst) and hi (the high 16).
func vcvtne2ps2bf16(dst, hi, lo int) encoded {
	return encoded{fmt.Sprintf("vcvtne2ps2bf16 %%zmm%d,%%zmm%d,%%zmm%d", lo, hi, dst), evex512(ppF2, 0x72, dst, hi, lo)}
}

func ldtilecfg(base int) encoded {
	return encoded{fmt.Sprintf("ldtilecfg (%%%s)", gpNames[base]), vex3(ppNone, 0x49, 0, 0, base, 0, baseMem(0, base))}
}

func tilerelease() encoded {
	return encoded{"tilerelease", vex3(ppNone, 0x49, 0, 0, 0, 0, []byte{0xc0})}
}

func tilezero(t int) encoded {
	return encoded{fmt.Sprintf("tilezero %%tmm%d", t), vex3(ppF2, 0x49, t, 0, 0, 0, []byte{0xc0 | byte(t)<<3})}
}

func tileloadd(t, base, index int) encoded {
	return encoded{fmt.Sprintf("tileloadd (%%%s,%%%s,1),%%tmm%d", gpNames[base], gpNames[index], t),
		vex3(ppF2, 0x4b, t, index, base, 0, sibMem(t, base, index))}
}

func tilestored(t, base, index int) encoded {
	return encoded{fmt.Sprintf("tilestored %%tmm%d,(%%%s,%%%s,1)", t, gpNames[base], gpNames[index]),
		vex3(ppF3, 0x4b, t, index, base, 0, sibMem(t, base, index))}
}

// tdpbf16ps accumulates a·b into the tile dst: Intel's TDPBF16PS dst, a, b
// has dst in ModRM.reg, a in ModRM.rm and b in VEX.vvvv.
func tdpbf16ps(dst, a, b int) encoded {
	return encoded{fmt.Sprintf("tdpbf16ps %%tmm%d,%%tmm%d,%%tmm%d", b, a, dst),
		vex3(ppF3, 0x5c, dst, 0, a, b, []byte{0xc0 | byte(dst)<<3 | byte(a)})}
}

// emit writes e as BYTE directives after a comment naming it.
func emit(e encoded) {
	Comment("enc: " + e.att)
	for _, b := range e.bytes {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(b)}})
	}
}

func hex(b []byte) string {
	var s []string
	for _, x := range b {
		s = append(s, fmt.Sprintf("%02x", x))
	}
	return strings.Join(s, " ")
}
