// Command asm generates ../own_amd64.s and ../own_stubs_amd64.go, the
// GEMM micro-kernels of package gemm (AVX-512 and AVX2+FMA, float32 and
// float64):
//
//	cd ops/gemm/asm && go run . -out ../own_amd64.s -stubs ../own_stubs_amd64.go -pkg gemm
//
// (go generate ./ops/gemm runs this.) It has its own module so that avo is
// not a dependency of the project.
//
// A micro-kernel computes one mr×nr tile of C from a packed panel of A
// (k steps of mr values) and a packed panel of B (k steps of nr values):
//
//	C = alpha·Ap·Bp + beta·C,  C not read when beta == 0
//
// The tile lives in registers for the whole k loop: mr rows of nv vectors,
// one broadcast of an A value feeding nv FMAs. The shapes are chosen to fill
// the register file (32 zmm: 12×2 accumulators, 16 ymm: 6×2) while leaving
// the B vectors and the broadcast their own registers.
package main

import (
	"flag"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/geluproject/gelu/ops/gemm/asm/internal/avx512"
)

var unroll = flag.Int("unroll", 4, "k steps per iteration of the main loop")

func main() {
	flag.Parse()
	ConstraintExpr("amd64,!noasm")
	kernels := []kernel{
		{name: "ownKernS12x32AVX512", f32: true, avx512: true, mr: 12, nv: 2},
		{name: "ownKernD12x16AVX512", f32: false, avx512: true, mr: 12, nv: 2},
		{name: "ownKernS6x16AVX2", f32: true, avx512: false, mr: 6, nv: 2},
		{name: "ownKernD6x8AVX2", f32: false, avx512: false, mr: 6, nv: 2},
	}
	for _, k := range kernels {
		k.unroll = *unroll
		k.generate()
	}
	// The same kernels reading A in place, element (i, p) at
	// a[i·rsa + p·csa]: the small-matrix path, which skips packing A.
	for _, k := range kernels {
		k.unroll = *unroll
		k.name += "A"
		k.strided = true
		k.generate()
	}
	transpose16()
	Generate()
}

// transpose16 generates ownTrans16S, the packing of a transposed float32
// operand for the AVX-512 path: 16 rows of src (lds apart) become 16-wide
// runs of dst (w apart), dst[p·w + j] = src[j·lds + p] for j < 16 and
// p < 16·blocks, one 16×16 block at a time transposed in registers
// (unpack, then 128-bit lane shuffles).
func transpose16() {
	TEXT("ownTrans16S", NOSPLIT, "func(dst *float32, w int, src *float32, lds, blocks int)")
	Pragma("noescape")
	Doc("ownTrans16S sets dst[p·w + j] = src[j·lds + p] for j < 16 and p < 16·blocks.")
	dst, w, src, lds, blocks := GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("dst"), dst)
	Load(Param("w"), w)
	Load(Param("src"), src)
	Load(Param("lds"), lds)
	Load(Param("blocks"), blocks)
	SHLQ(Imm(2), w)
	SHLQ(Imm(2), lds)
	zs := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9,
		reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20,
		reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	r, t := zs[:16], zs[16:]
	row, out := GP64(), GP64()
	TESTQ(blocks, blocks)
	JZ(LabelRef("done"))
	Label("block")
	MOVQ(src, row)
	for i := 0; i < 16; i++ {
		VMOVUPS(Mem{Base: row}, r[i])
		if i < 15 {
			ADDQ(lds, row)
		}
	}
	avx512.Transpose16(r, t)
	MOVQ(dst, out)
	for i := 0; i < 16; i++ {
		VMOVUPS(r[i], Mem{Base: out})
		if i < 15 {
			ADDQ(w, out)
		}
	}
	ADDQ(Imm(64), src)
	// dst moves 16 rows of w on.
	MOVQ(w, out)
	SHLQ(Imm(4), out)
	ADDQ(out, dst)
	DECQ(blocks)
	JNZ(LabelRef("block"))
	Label("done")
	VZEROUPPER()
	RET()
}

type kernel struct {
	name        string
	f32, avx512 bool
	mr, nv      int // tile rows, vectors per tile row
	unroll      int
	// strided: A is read in place with strides rsa (rows) and csa (k
	// steps) instead of from a packed panel.
	strided bool
}

// isa holds the instructions that differ between float32 and float64.
type isa struct {
	load, store, fma, mul func(...Op)
	bcast                 func(...Op)
	ucomis                func(Op, Op)
	size                  int
}

func (k kernel) isa() isa {
	if k.f32 {
		return isa{load: VMOVUPS, store: VMOVUPS, fma: VFMADD231PS, mul: VMULPS,
			bcast: VBROADCASTSS, ucomis: VUCOMISS, size: 4}
	}
	return isa{load: VMOVUPD, store: VMOVUPD, fma: VFMADD231PD, mul: VMULPD,
		bcast: VBROADCASTSD, ucomis: VUCOMISD, size: 8}
}

// vec returns the i-th vector register of the kernel's width. Physical
// registers, because avo's allocator may hand an AVX2 kernel Y16–Y31, which
// need AVX-512 encodings.
func (k kernel) vec(i int) reg.VecPhysical {
	zs := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9,
		reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20,
		reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	ys := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9,
		reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	if k.avx512 {
		return zs[i]
	}
	if i >= len(ys) {
		panic(fmt.Sprintf("%s needs %d ymm registers", k.name, i+1))
	}
	return ys[i]
}

func (k kernel) generate() {
	in := k.isa()
	typ := "float64"
	if k.f32 {
		typ = "float32"
	}
	vecBytes := 32
	if k.avx512 {
		vecBytes = 64
	}
	nr := k.nv * vecBytes / in.size
	if k.strided {
		TEXT(k.name, NOSPLIT, fmt.Sprintf("func(k int, a *%s, rsa, csa int, b *%s, ldb int, c *%s, ldc int, alpha, beta %s)", typ, typ, typ, typ))
		Doc(fmt.Sprintf("%s computes the %d×%d tile c = alpha·a·b + beta·c from A read in place (element (i, p) at a[i·rsa + p·csa]) and B rows ldb apart (c not read when beta == 0).", k.name, k.mr, nr))
	} else {
		TEXT(k.name, NOSPLIT, fmt.Sprintf("func(k int, a, b *%s, ldb int, c *%s, ldc int, alpha, beta %s)", typ, typ, typ))
		Doc(fmt.Sprintf("%s computes the %d×%d tile c = alpha·a·b + beta·c from a packed A panel and B rows ldb apart (c not read when beta == 0).", k.name, k.mr, nr))
	}

	acc := func(i, v int) reg.VecPhysical { return k.vec(i*k.nv + v) }
	bv := func(v int) reg.VecPhysical { return k.vec(k.mr*k.nv + v) }
	bc := func(j int) reg.VecPhysical { return k.vec(k.mr*k.nv + k.nv + j%2) }

	kr, ap, bp, ldb, cp, ldc := GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("k"), kr)
	Load(Param("a"), ap)
	Load(Param("b"), bp)
	Load(Param("ldb"), ldb)
	Load(Param("c"), cp)
	Load(Param("ldc"), ldc)
	shift := 2
	if !k.f32 {
		shift = 3
	}
	SHLQ(Imm(uint64(shift)), ldc)
	SHLQ(Imm(uint64(shift)), ldb)

	// In strided mode row i of A is read at bases[i/3] + (i%3)·rsa: base
	// registers three rows apart, indexed by rsa with scale 0, 1 or 2.
	var rsa, csa reg.GPVirtual
	var bases []reg.GPVirtual
	if k.strided {
		rsa, csa = GP64(), GP64()
		Load(Param("rsa"), rsa)
		Load(Param("csa"), csa)
		SHLQ(Imm(uint64(shift)), rsa)
		SHLQ(Imm(uint64(shift)), csa)
		rs3 := GP64()
		LEAQ(Mem{Base: rsa, Index: rsa, Scale: 2}, rs3)
		for q := 0; q*3 < k.mr; q++ {
			b := GP64()
			if q == 0 {
				MOVQ(ap, b)
			} else {
				LEAQ(Mem{Base: bases[q-1], Index: rs3, Scale: 1}, b)
			}
			bases = append(bases, b)
		}
	}
	aAddr := func(u, i int) Mem {
		if !k.strided {
			return Mem{Base: ap, Disp: (u*k.mr + i) * in.size}
		}
		m := Mem{Base: bases[i/3]}
		if i%3 > 0 {
			m.Index, m.Scale = rsa, uint8(i%3)
		}
		return m
	}

	for i := 0; i < k.mr; i++ {
		for v := 0; v < k.nv; v++ {
			r := acc(i, v)
			if k.avx512 {
				VPXORD(r, r, r)
			} else {
				VXORPS(r, r, r)
			}
		}
	}

	step := func(u int) {
		for v := 0; v < k.nv; v++ {
			in.load(Mem{Base: bp, Disp: v * vecBytes}, bv(v))
		}
		for i := 0; i < k.mr; i++ {
			t := bc(i)
			in.bcast(aAddr(u, i), t)
			for v := 0; v < k.nv; v++ {
				in.fma(bv(v), t, acc(i, v))
			}
		}
		// B is a packed panel (ldb = nr) or, for a single A panel, the
		// rows of B itself.
		ADDQ(ldb, bp)
		for _, b := range bases {
			ADDQ(csa, b)
		}
	}
	nextA := func(steps int) {
		if !k.strided {
			ADDQ(U32(steps*k.mr*in.size), ap)
		}
	}

	Comment("main loop: unroll k steps at a time")
	CMPQ(kr, Imm(uint64(k.unroll)))
	JL(LabelRef("tail"))
	Label("main")
	for u := 0; u < k.unroll; u++ {
		step(u)
	}
	nextA(k.unroll)
	SUBQ(Imm(uint64(k.unroll)), kr)
	CMPQ(kr, Imm(uint64(k.unroll)))
	JGE(LabelRef("main"))

	Label("tail")
	TESTQ(kr, kr)
	JZ(LabelRef("store"))
	Label("tailloop")
	step(0)
	nextA(1)
	DECQ(kr)
	JNZ(LabelRef("tailloop"))

	Label("store")
	if k.nv < 2 {
		panic(k.name + ": the epilogue keeps alpha and beta in the two B registers")
	}
	alpha, beta := bv(0), bv(1)
	// Broadcast straight from the argument frame: a scalar load into X16+
	// would need an EVEX encoding Go's MOVSS does not have.
	in.bcast(avx512.ParamAddr("alpha"), alpha)
	in.bcast(avx512.ParamAddr("beta"), beta)
	betaX, zeroX := beta.AsX(), bc(1).AsX()
	for i := 0; i < k.mr; i++ {
		for v := 0; v < k.nv; v++ {
			in.mul(alpha, acc(i, v), acc(i, v))
		}
	}
	VXORPS(zeroX, zeroX, zeroX)
	in.ucomis(zeroX, betaX)
	JNE(LabelRef("withbeta"))
	JP(LabelRef("withbeta"))
	Comment("beta == 0: c is not read, so NaNs in it do not propagate")
	for i := 0; i < k.mr; i++ {
		for v := 0; v < k.nv; v++ {
			in.store(acc(i, v), Mem{Base: cp, Disp: v * vecBytes})
		}
		if i < k.mr-1 {
			ADDQ(ldc, cp)
		}
	}
	VZEROUPPER()
	RET()

	Label("withbeta")
	for i := 0; i < k.mr; i++ {
		for v := 0; v < k.nv; v++ {
			in.fma(Mem{Base: cp, Disp: v * vecBytes}, beta, acc(i, v))
			in.store(acc(i, v), Mem{Base: cp, Disp: v * vecBytes})
		}
		if i < k.mr-1 {
			ADDQ(ldc, cp)
		}
	}
	VZEROUPPER()
	RET()
}
