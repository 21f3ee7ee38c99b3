//go:build amd64 && !noasm

package gemm

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asm && go run ./bf16 -out ../bf16_amd64.s -stubs ../bf16_stubs_amd64.go -pkg gemm"

// bf16HasAVX512BF16 is whether the CPU runs the AVX512_BF16 kernels and
// packing (which also use AVX512BW's VPERMW).
var bf16HasAVX512BF16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512BF16

// The assembly paths, fastest first. AVX512_BF16: the 12×32 tile of the
// float32 AVX-512 kernel (24 accumulators), two steps of k per VDPBF16PS,
// which issues as often as an FMA does: twice the float32 rate. AMX: a
// 32×32 tile of four 16×16 accumulator tiles.
var (
	bf16AVX512Path = bf16Kernel{
		name: "avx512bf16", label: "AVX512_BF16", micro: bf16MicroAVX512,
		mr: 12, nr: 32, mc: 144, nc: 512, kAlign: 1, packAsm: true,
		minWorkPerPart: 1 << 23,
		usable: func() (bool, string) {
			if bf16HasAVX512BF16 {
				return true, ""
			}
			return false, "the CPU has no AVX512_BF16"
		},
	}
	bf16AMXPath = bf16Kernel{
		name: "amx", label: "AMX-BF16", micro: bf16MicroAMX,
		mr: 32, nr: 32, mc: 128, nc: 512, kAlign: 16, aRowMajor: true, packAsm: true,
		scratch: 32 * 32, minWorkPerPart: 1 << 23,
		usable: bf16AMXUsable,
	}
)

var bf16Paths = []*bf16Kernel{&bf16AMXPath, &bf16AVX512Path, &bf16GenericPath}

// bf16PeakLoop is the VDPBF16PS loop PeakBF16GFLOPS times, nil without
// AVX512_BF16.
var bf16PeakLoop = func() func(int) {
	if bf16HasAVX512BF16 {
		return bf16PeakAVX512
	}
	return nil
}()

func bf16MicroAVX512(kp int, a *uint32, _ int, b *uint32, c *float32, ldc int, alpha, beta float32, _ []float32) {
	bf16KernAVX512(kp, a, b, c, ldc, alpha, beta)
}

// bf16MicroAMX runs the AMX kernel: kp is a multiple of 16 (kAlign), the A
// panel row-major with lda pairs per row.
func bf16MicroAMX(kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, alpha, beta float32, scratch []float32) {
	bf16KernAMX(kp/16, a, lda, b, c, ldc, alpha, beta, &bf16AMXConfig[0], &scratch[0])
}

// bf16AMXConfig is the tile configuration bf16KernAMX loads: palette 1,
// tiles 0–7 of 16 rows of 64 bytes.
var bf16AMXConfig = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := range 8 {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}()

func bf16ToBF16s(dst []BF16, src []float32) {
	n := 0
	if bf16HasAVX512BF16 {
		n = len(src) &^ 31
		if n > 0 {
			bf16FromF32s((*uint16)(&dst[0]), &src[0], n)
		}
	}
	bf16ToBF16sGo(dst[n:], src[n:])
}

func bf16FromBF16s(dst []float32, src []BF16) {
	n := 0
	if cpu.X86.HasAVX512F {
		n = len(src) &^ 15
		if n > 0 {
			bf16ToF32s(&dst[0], (*uint16)(&src[0]), n)
		}
	}
	bf16FromBF16sGo(dst[n:], src[n:])
}

// bf16PackPairsAsm is bf16PackPairs in AVX-512, for float32 (the
// conversion is VCVTNE2PS2BF16: ToBF16's bits) and bfloat16 operands,
// writing the first ceil(kc/2) pair rows; it reports false where it does
// not apply.
func bf16PackPairsAsm(dst []uint32, w int, x *bf16Src, kRows bool, j0, cols, p0, kc int) bool {
	if !bf16HasAVX512BF16 || w > 32 || cols < 1 || kc < 1 {
		return false
	}
	pairs := (kc + 1) / 2
	_ = dst[pairs*w-1]
	ld := x.ld
	lanes := func(n int) uint32 { return uint32(uint64(1)<<min(max(n, 0), 32) - 1) }
	if kRows {
		last := (p0+kc-1)*ld + j0 + cols - 1 // the last element read
		if x.isF32 {
			_ = x.f32[last]
			bf16PackRowsS(&dst[0], w, &x.f32[p0*ld+j0], ld, kc, lanes(cols), lanes(w))
		} else {
			_ = x.b16[last]
			bf16PackRowsH(&dst[0], w, (*uint16)(&x.b16[p0*ld+j0]), ld, kc, lanes(cols), lanes(w))
		}
		return true
	}
	if x.isF32 {
		_ = x.f32[(j0+cols-1)*ld+p0+kc-1]
	} else {
		_ = x.b16[(j0+cols-1)*ld+p0+kc-1]
	}
	rem := kc % 32
	for jg := 0; jg < w; jg += 16 {
		rows := max(0, min(16, cols-jg))
		smask := uint16(lanes(min(16, w-jg)))
		i := 0 // not read when no row is
		if rows > 0 {
			i = (j0+jg)*ld + p0
		}
		if x.isF32 {
			bf16PackColsS16(&dst[jg], w, &x.f32[i], ld, rows, kc/32, lanes(rem), (rem+1)/2, smask)
		} else {
			bf16PackColsH16(&dst[jg], w, (*uint16)(&x.b16[i]), ld, rows, kc/32, lanes(rem), (rem+1)/2, smask)
		}
	}
	return true
}
