//go:build amd64 && !noasm

package activation

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
	"github.com/geluproject/gelu/ops/simd"
)

type probe func(v, t []float64, x []float32, p *[8]float64)

func TestFastKernelErrorBound(t *testing.T) {
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512DQ || !cpu.X86.HasAVX512VL || !cpu.X86.HasBMI2 {
		t.Skip("no AVX-512 here")
	}
	// The probes check the assembly even when GELU_KERNELS=generic turned
	// it off for the rest of the program.
	defer func(on bool) { simd.Available = on }(simd.Available)
	simd.Available = true
	const bound = 0x1p-42
	xs := probeInputs()
	for _, a := range []Activation{GELU, GELUTanh, GELUSigmoid, SiLU, SigmoidGated(0.3), SigmoidGated(20), ELU, ELUAlpha(0.5), ELUAlpha(3)} {
		for k := 0; k <= 2; k++ {
			var p [8]float64
			id := a.row.simd32(k, a.param, &p)
			pr := map[simd.ID]probe{
				simd.GELU32D0: simd.GELUFast32D0Probe, simd.GELU32D1: simd.GELUFast32D1Probe, simd.GELU32D2: simd.GELUFast32D2Probe,
				simd.Gated32D0: simd.GatedFast32D0Probe, simd.Gated32D1: simd.GatedFast32D1Probe, simd.Gated32D2: simd.GatedFast32D2Probe,
				simd.ELU32D0: simd.ELUFast32D0Probe, simd.ELU32D1: simd.ELUFast32D1Probe, simd.ELU32D2: simd.ELUFast32D2Probe,
			}[id]
			v, ts := make([]float64, len(xs)), make([]float64, len(xs))
			pr(v, ts, xs, &p)
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
