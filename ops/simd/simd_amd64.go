//go:build amd64 && !noasm

package simd

//go:generate sh -c "cd asm && go run . -out ../kernels_amd64.s -stubs ../kernels_stubs_amd64.go -pkg simd"

import (
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

// Available reports whether the kernels can run here. Tests switch it off
// to compare with the portable loops.
var Available = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2 &&
	!strings.EqualFold(strings.TrimSpace(os.Getenv("GELU_KERNELS")), "generic")

// Call32 runs the float32 kernel id on one block (len(x) ≤ Block) and
// reports whether it left lanes for the caller (marked in exc).
func Call32(id ID, dst, x, g []float32, add bool, p *[8]float64, exc *Bitmap) bool {
	switch id {
	case GELU32D0:
		return GELUFast32D0(dst, x, g, add, p, exc[:])
	case GELU32D1:
		return GELUFast32D1(dst, x, g, add, p, exc[:])
	case GELU32D2:
		return GELUFast32D2(dst, x, g, add, p, exc[:])
	case Gated32D0:
		return GatedFast32D0(dst, x, g, add, p, exc[:])
	case Gated32D1:
		return GatedFast32D1(dst, x, g, add, p, exc[:])
	case Gated32D2:
		return GatedFast32D2(dst, x, g, add, p, exc[:])
	case ELU32D0:
		return ELUFast32D0(dst, x, g, add, p, exc[:])
	case ELU32D1:
		return ELUFast32D1(dst, x, g, add, p, exc[:])
	case ELU32D2:
		return ELUFast32D2(dst, x, g, add, p, exc[:])
	}
	panic("simd: Call32 with a float64 or unknown kernel")
}

// Call64 is Call32 for the float64 kernels.
func Call64(id ID, dst, x, g []float64, add bool, p *[8]float64, exc *Bitmap) bool {
	switch id {
	case GELU64D0:
		return GELUExact64D0(dst, x, g, add, p, exc[:])
	case GELU64D1:
		return GELUExact64D1(dst, x, g, add, p, exc[:])
	case GELU64D2:
		return GELUExact64D2(dst, x, g, add, p, exc[:])
	case Tanh64D0:
		return TanhGated64D0(dst, x, g, add, p, exc[:])
	case Tanh64D1:
		return TanhGated64D1(dst, x, g, add, p, exc[:])
	case Linear64D0:
		return LinearGated64D0(dst, x, g, add, p, exc[:])
	case Linear64D1:
		return LinearGated64D1(dst, x, g, add, p, exc[:])
	}
	panic("simd: Call64 with a float32 or unknown kernel")
}
