// Command asm generates ../kernels_amd64.s and ../kernels_stubs_amd64.go,
// the activation kernels of package simd and its optimizer update kernels:
//
//	cd ops/simd/asm && go run . -out ../kernels_amd64.s -stubs ../kernels_stubs_amd64.go -pkg simd
//
// (go generate ./ops/simd runs this.) It has its own module so that avo is not a
// dependency of the project.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"

	. "github.com/mmcloughlin/avo/build"
)

var (
	only        = flag.String("only", "", "generate only this kernel (for debugging)")
	unrollExact = flag.Int("unroll64", 2, "independent chains per iteration in the float64 kernels")
	unrollFast  = flag.Int("unroll32", 3, "independent chains per iteration in the float32 kernels")
	unrollLane  = flag.Int("unrolllane", 2, "independent chains per iteration in the gated float32-lane AVX-512 kernels")
	unrollAVX2  = flag.Int("unrollavx2", 1, "independent chains per iteration in the AVX2 kernels (16 YMM registers)")
)

func main() {
	flag.Parse()
	ConstraintExpr("amd64,!noasm")
	var ks []kernel
	for order := 0; order <= 2; order++ {
		ks = append(ks, geluExact64(order), geluFast32(order), gatedFast32(order), eluFast32(order))
	}
	for order := 0; order <= 1; order++ {
		ks = append(ks, gatedExact64("TanhGated", tanhGate64, order), gatedExact64("LinearGated", linearGate64, order))
	}
	for _, k := range ks {
		if *only != "" && k.name != *only {
			continue
		}
		k.unroll = *unrollExact
		if k.f32 {
			k.unroll = *unrollFast
		}
		k.generate()
		if k.f32 {
			k.generateProbe()
		}
	}
	// The float32-lane kernels: exact GELU, then the gated family, each
	// AVX-512 first.
	lane := func(k kernel32, avx512 bool, unroll512 int) {
		if *only != "" && k.name != *only {
			return
		}
		k.unroll = *unrollAVX2
		if avx512 {
			k.unroll = unroll512
		}
		k.generate()
	}
	for _, avx512 := range []bool{true, false} {
		for order := 0; order <= 2; order++ {
			lane(gelu32Kernel(order, avx512), avx512, gelu32Unroll[order])
		}
	}
	for _, avx512 := range []bool{true, false} {
		for _, g := range gates32 {
			for order := 0; order <= 2; order++ {
				lane(gated32Kernel(g, order, avx512), avx512, *unrollLane)
			}
		}
	}
	// The optimizer update kernels (update.go), AVX-512 first.
	for _, wide := range []bool{true, false} {
		for _, f64 := range []bool{false, true} {
			for _, k := range []struct {
				name string
				gen  func(wide, f64 bool)
			}{{"SGD", sgdUpdate}, {"Adam", adamUpdate}, {"FirstNonFinite", firstNonFinite}} {
				if *only == "" || *only == updateName(k.name, wide, f64) {
					k.gen(wide, f64)
				}
			}
		}
	}
	consts.emit()
	Generate()
	if out := flag.Lookup("out"); out != nil && out.Value.String() != "" {
		dropSelfMoves(out.Value.String())
		checkAVX2Registers(out.Value.String())
	}
	fmt.Fprintf(os.Stderr, "G fit: max relative error %.3g (2^%.1f)\n", gFitError, math.Log2(gFitError))
}

// selfMove matches the register-to-itself copies left where the allocator
// gave an FMA's copy and its source the same register.
var selfMove = regexp.MustCompile(`(?m)^\tVMOVAP[SD]\s+([YZ]\d+), ([YZ]\d+)\n`)

func dropSelfMoves(path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	out := selfMove.ReplaceAllFunc(src, func(m []byte) []byte {
		if g := selfMove.FindSubmatch(m); string(g[1]) == string(g[2]) {
			return nil
		}
		return m
	})
	if err := os.WriteFile(path, out, 0o644); err != nil {
		panic(err)
	}
}

// highVec matches the vector registers only AVX-512 has (16 to 31).
var highVec = regexp.MustCompile(`\b[XYZ](1[6-9]|2\d|3[01])\b`)

// checkAVX2Registers fails if a kernel meant for CPUs without AVX-512 (its
// name has AVX2) uses registers 16 to 31: the allocator knows all 32, and
// an AVX2 body that needs more than 16 would assemble (EVEX encodings) but
// fault on those CPUs.
func checkAVX2Registers(path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fn := ""
	for n, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			fn = line
		}
		if strings.Contains(fn, "AVX2") && highVec.MatchString(line) {
			panic(fmt.Sprintf("%s:%d: an AVX2 kernel uses a register AVX2 lacks: %s", path, n+1, strings.TrimSpace(line)))
		}
	}
}
