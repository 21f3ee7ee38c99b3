//go:build amd64 && !noasm

package ops

// The error bound the float32 kernels' certainty check relies on: their
// float64 values, before rounding, are within fastEps/4 = 2^−42 of the
// reference relative to the term scale T they report, wherever a float32
// result g·f can be nonzero (T ≥ 1e−84: below, g·f underflows even for
// g = MaxFloat32). The probes are the kernels' own code with the float64
// value stored instead of rounded.

import (
	"fmt"
	"math"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/geluproject/gelu/graph/rng"
)

type probe func(v, t []float64, x []float32, p *[8]float64)

func TestFastKernelErrorBound(t *testing.T) {
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512DQ || !cpu.X86.HasAVX512VL || !cpu.X86.HasBMI2 {
		t.Skip("no AVX-512 here")
	}
	// The probes check the assembly even when GELU_KERNELS=generic turned
	// it off for the rest of the program.
	defer func(on bool) { useSIMD = on }(useSIMD)
	useSIMD = true
	const bound = 0x1p-42
	xs := probeInputs()
	for _, a := range []Activation{GELU, GELUTanh, GELUSigmoid, SiLU, SigmoidGated(0.3), SigmoidGated(20), ELU, ELUAlpha(0.5), ELUAlpha(3)} {
		for k := 0; k <= 2; k++ {
			ck := chunkKernel[float32]{a: a, order: k}
			simd32(&ck)
			pr := map[asmID]probe{
				asmGELU32D0: geluFast32D0Probe, asmGELU32D1: geluFast32D1Probe, asmGELU32D2: geluFast32D2Probe,
				asmGated32D0: gatedFast32D0Probe, asmGated32D1: gatedFast32D1Probe, asmGated32D2: gatedFast32D2Probe,
				asmELU32D0: eluFast32D0Probe, asmELU32D1: eluFast32D1Probe, asmELU32D2: eluFast32D2Probe,
			}[ck.asm]
			v, ts := make([]float64, len(xs)), make([]float64, len(xs))
			pr(v, ts, xs, &ck.p)
			var worst, worstX float64
			for i, x := range xs {
				ref := want(a, k, float64(x), 1)
				scale := math.Abs(ts[i])
				if !(scale >= 1e-84) || math.IsInf(scale, 0) || math.IsNaN(ref) {
					continue
				}
				if e := math.Abs(v[i]-ref) / scale; !(e <= worst) {
					worst, worstX = e, float64(x)
				}
			}
			name := fmt.Sprintf("%s f^(%d)", a, k)
			if worst > bound {
				t.Errorf("%s: error %.3g·T (2^%.1f) at x=%v exceeds 2^-42", name, worst, math.Log2(worst), worstX)
			} else {
				t.Logf("%s: max error 2^%.1f·T at x=%v", name, math.Log2(worst), worstX)
			}
		}
	}
}

// probeInputs: every float32 in [−2, 2] with 12 fraction bits, a grid over
// [−40, 40], random normal, uniform and log-uniform values.
func probeInputs() []float32 {
	var xs []float32
	for k := -8192; k <= 8192; k++ {
		xs = append(xs, float32(k)/4096)
	}
	for k := -40960; k <= 40960; k++ {
		xs = append(xs, float32(k)/1024)
	}
	r := rng.New(15, "probe")
	for i := 0; i < 100000; i++ {
		xs = append(xs, float32(3*r.Normal()), float32(r.Uniform(-1000, 1000)),
			float32(math.Copysign(math.Pow(10, r.Uniform(-30, 3)), r.Uniform(-1, 1))))
	}
	return xs
}
