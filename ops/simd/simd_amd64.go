//go:build amd64 && !noasm

package simd

//go:generate sh -c "cd asm && go run . -out ../kernels_amd64.s -stubs ../kernels_stubs_amd64.go -pkg simd"

import (
	"fmt"
	"os"

	"golang.org/x/sys/cpu"
)

var (
	has512  = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2
	hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// Current is the path the kernels take (see the package documentation).
// Tests set it, with Use, to run every path this CPU has.
var Current = pickPath()

// Available reports whether any assembly runs: Current is not Generic.
var Available = Current != Generic

func pickPath() Path {
	want := AVX512 // AVX2 on CPUs without AVX-512 (best)
	if s := os.Getenv("GELU_KERNELS"); s != "" {
		p, err := ParsePath(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err, "(using the default)")
		} else {
			want = p
		}
	}
	return best(want)
}

// best returns want, or the best path below it the CPU can run.
func best(want Path) Path {
	switch {
	case want == Generic:
		return Generic
	case want == AVX2 || !has512:
		if hasAVX2 {
			return AVX2
		}
		return Generic
	}
	return want
}

// Paths lists the paths this CPU can run, Generic first.
func Paths() []Path {
	ps := []Path{Generic}
	if hasAVX2 {
		ps = append(ps, AVX2)
	}
	if has512 {
		ps = append(ps, Exact32, AVX512)
	}
	return ps
}

// Use switches to path p (which must be in Paths) and returns the previous
// one, for tests and benchmarks that compare paths; not safe while kernels run.
func Use(p Path) Path {
	old := Current
	Current = best(p)
	Available = Current != Generic
	return old
}

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
	if id.Lane32() && Current == AVX2 {
		switch id {
		case GELULane32D0:
			return GELULane32AVX2D0(dst, x, g, add, p, exc[:])
		case GELULane32D1:
			return GELULane32AVX2D1(dst, x, g, add, p, exc[:])
		case GELULane32D2:
			return GELULane32AVX2D2(dst, x, g, add, p, exc[:])
		case GELUTanhLane32D0:
			return GELUTanhLane32AVX2D0(dst, x, g, add, p, exc[:])
		case GELUTanhLane32D1:
			return GELUTanhLane32AVX2D1(dst, x, g, add, p, exc[:])
		case GELUTanhLane32D2:
			return GELUTanhLane32AVX2D2(dst, x, g, add, p, exc[:])
		case GELUSigmoidLane32D0:
			return GELUSigmoidLane32AVX2D0(dst, x, g, add, p, exc[:])
		case GELUSigmoidLane32D1:
			return GELUSigmoidLane32AVX2D1(dst, x, g, add, p, exc[:])
		case GELUSigmoidLane32D2:
			return GELUSigmoidLane32AVX2D2(dst, x, g, add, p, exc[:])
		case SiLULane32D0:
			return SiLULane32AVX2D0(dst, x, g, add, p, exc[:])
		case SiLULane32D1:
			return SiLULane32AVX2D1(dst, x, g, add, p, exc[:])
		case SiLULane32D2:
			return SiLULane32AVX2D2(dst, x, g, add, p, exc[:])
		}
		// Never the AVX-512 form on a CPU without it (an illegal
		// instruction).
		panic("simd: Call32: kernel has no AVX2 form")
	}
	switch id {
	case GELULane32D0:
		return GELULane32AVX512D0(dst, x, g, add, p, exc[:])
	case GELULane32D1:
		return GELULane32AVX512D1(dst, x, g, add, p, exc[:])
	case GELULane32D2:
		return GELULane32AVX512D2(dst, x, g, add, p, exc[:])
	case GELUTanhLane32D0:
		return GELUTanhLane32AVX512D0(dst, x, g, add, p, exc[:])
	case GELUTanhLane32D1:
		return GELUTanhLane32AVX512D1(dst, x, g, add, p, exc[:])
	case GELUTanhLane32D2:
		return GELUTanhLane32AVX512D2(dst, x, g, add, p, exc[:])
	case GELUSigmoidLane32D0:
		return GELUSigmoidLane32AVX512D0(dst, x, g, add, p, exc[:])
	case GELUSigmoidLane32D1:
		return GELUSigmoidLane32AVX512D1(dst, x, g, add, p, exc[:])
	case GELUSigmoidLane32D2:
		return GELUSigmoidLane32AVX512D2(dst, x, g, add, p, exc[:])
	case SiLULane32D0:
		return SiLULane32AVX512D0(dst, x, g, add, p, exc[:])
	case SiLULane32D1:
		return SiLULane32AVX512D1(dst, x, g, add, p, exc[:])
	case SiLULane32D2:
		return SiLULane32AVX512D2(dst, x, g, add, p, exc[:])
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
