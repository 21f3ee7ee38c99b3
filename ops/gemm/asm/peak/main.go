// Command peak generates ops/gemm/peak_amd64.s and peak_stubs_amd64.go,
// the register-only FMA loops package gemm times to measure the machine's
// peak floating-point rate (gemm.PeakGFLOPS):
//
//	cd ops/gemm/asm && go run ./peak -out ../peak_amd64.s -stubs ../peak_stubs_amd64.go -pkg gemm
//
// (go generate ./ops/gemm runs this.) A loop keeps Accs independent
// accumulator vectors and two operand vectors in registers and does
// Unroll·Accs fused multiply-adds per iteration, acc += a·b: no load or
// store inside the loop, and enough independent chains to hide the FMA
// latency (4 cycles, 2 FMAs per cycle: 8 chains needed on the CPUs of
// interest). One loop per vector width the own GEMM's kernels use (zmm for
// its AVX-512 path, ymm for AVX2+FMA) and per float type.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Accs and Unroll are mirrored by peakAccs and peakUnroll in peak.go.
const (
	Accs   = 12
	Unroll = 4
)

type loop struct {
	name   string
	f32    bool
	avx512 bool
}

func main() {
	ConstraintExpr("amd64,!noasm")
	for _, l := range []loop{
		{"peakFMAS512", true, true},
		{"peakFMAD512", false, true},
		{"peakFMAS256", true, false},
		{"peakFMAD256", false, false},
	} {
		l.generate()
	}
	Generate()
}

func (l loop) vec(i int) reg.VecPhysical {
	if l.avx512 {
		return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13}[i]
	}
	return []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13}[i]
}

func (l loop) generate() {
	typ, size := "float64", 8
	load, fma, bcast := VMOVUPD, VFMADD231PD, VBROADCASTSD
	if l.f32 {
		typ, size = "float32", 4
		load, fma, bcast = VMOVUPS, VFMADD231PS, VBROADCASTSS
	}
	vecBytes := 32
	if l.avx512 {
		vecBytes = 64
	}
	TEXT(l.name, NOSPLIT, fmt.Sprintf("func(n int, a, b %s, acc *%s)", typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s loads %d accumulators of %d %s from acc, adds a·b to each %d times per iteration for n iterations, and stores them back.",
		l.name, Accs, vecBytes/size, typ, Unroll))
	n, p := GP64(), GP64()
	Load(Param("n"), n)
	Load(Param("acc"), p)
	va, vb := l.vec(Accs), l.vec(Accs+1)
	bcast(mem("a"), va)
	bcast(mem("b"), vb)
	for i := range Accs {
		load(Mem{Base: p, Disp: i * vecBytes}, l.vec(i))
	}
	TESTQ(n, n)
	JZ(LabelRef(l.name + "_store"))
	Label(l.name + "_loop")
	for range Unroll {
		for i := range Accs {
			fma(va, vb, l.vec(i))
		}
	}
	DECQ(n)
	JNZ(LabelRef(l.name + "_loop"))
	Label(l.name + "_store")
	for i := range Accs {
		load(l.vec(i), Mem{Base: p, Disp: i * vecBytes})
	}
	VZEROUPPER()
	RET()
}

func mem(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}
