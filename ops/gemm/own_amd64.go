//go:build amd64 && !noasm

package gemm

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asm && go run . -out ../own_amd64.s -stubs ../own_stubs_amd64.go -pkg gemm"

// The assembly paths, fastest first. minWorkPerPart: on
// BenchmarkOwnThreshold (2 cores of a shared machine, float32, AVX-512, the
// small-matrix path) one thread beat two on every cube up to 192³ (at 128³
// 200 against 170 GFLOP/s), they tied at 256³ (≈200) and two won from
// 384³ (280 against 208): a split product waits for the slower part and for
// a worker to wake, which the 128-wide products of an MLP (2–13 M
// multiply-adds, 10–60 µs) cannot repay. So each part gets at least 2²³;
// before the small-matrix path the threshold was 2¹⁷ (64³ split won, 40
// against 18 GFLOP/s). Blocking: an mr×kc A panel of at most
// 12 KiB stays in L1 (32 KiB per core on the machines measured), and a
// kc×nc B block of at most 512 KiB in L2.
var (
	ownAVX512Path = ownPath{
		name:  "avx512",
		label: "AVX-512",
		s:     ownKernel[float32]{micro: ownKernS12x32AVX512, microA: ownKernS12x32AVX512A, trans16: true, mr: 12, nr: 32, kc: 256, mc: 144, nc: 512, minWorkPerPart: 1 << 23},
		d:     ownKernel[float64]{micro: ownKernD12x16AVX512, microA: ownKernD12x16AVX512A, mr: 12, nr: 16, kc: 128, mc: 144, nc: 512, minWorkPerPart: 1 << 23},
		ok:    func() bool { return cpu.X86.HasAVX512F },
	}
	ownAVX2Path = ownPath{
		name:  "avx2",
		label: "AVX2+FMA",
		s:     ownKernel[float32]{micro: ownKernS6x16AVX2, microA: ownKernS6x16AVX2A, mr: 6, nr: 16, kc: 256, mc: 144, nc: 512, minWorkPerPart: 1 << 23},
		d:     ownKernel[float64]{micro: ownKernD6x8AVX2, microA: ownKernD6x8AVX2A, mr: 6, nr: 8, kc: 256, mc: 144, nc: 256, minWorkPerPart: 1 << 23},
		ok:    func() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA },
	}
)

var ownPaths = []*ownPath{&ownAVX512Path, &ownAVX2Path, &ownGenericPath}
