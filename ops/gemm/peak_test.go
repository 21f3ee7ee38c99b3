package gemm

import (
	"errors"
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// TestPeakLoopsExact runs every FMA loop this CPU can run on accumulators
// starting at their index i, with a = 3, b = 0.5 and n = 1000 iterations of
// peakUnroll = 4 FMAs per accumulator: each must end at i + 1000·4·1.5 =
// i + 6000 exactly (every partial sum is a multiple of 0.5 below 2¹⁴, exact
// in float32). n = 0 must leave them as they were.
func TestPeakLoopsExact(t *testing.T) {
	ran := 0
	for _, p := range ownPaths {
		l, ok := peakLoops[p.name]
		if !ok || !p.ok() {
			continue
		}
		ran++
		for _, n := range []int{0, 1000} {
			want := func(i int) float64 { return float64(i) + float64(n)*4*1.5 }
			s := make([]float32, peakAccs*l.vecBytes/4)
			for i := range s {
				s[i] = float32(i)
			}
			l.s(n, 3, 0.5, &s[0])
			for i, v := range s {
				if float64(v) != want(i) {
					t.Fatalf("%s float32, n = %d: acc[%d] = %v, want %v", p.name, n, i, v, want(i))
				}
			}
			d := make([]float64, peakAccs*l.vecBytes/8)
			for i := range d {
				d[i] = float64(i)
			}
			l.d(n, 3, 0.5, &d[0])
			for i, v := range d {
				if v != want(i) {
					t.Fatalf("%s float64, n = %d: acc[%d] = %v, want %v", p.name, n, i, v, want(i))
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("no FMA loop runs on this CPU")
	}
}

// TestPeakRun: the flops PeakRun reports are whole iterations of 12
// accumulators × 4 FMAs × 2 flops × the lanes of a vector (16 float32 on
// zmm: 1536 per iteration), and PeakGFLOPS is a positive rate; where the
// own GEMM has no assembly both say the peak is unknown.
func TestPeakRun(t *testing.T) {
	lanes32 := map[string]int{"AVX-512 FMA on zmm": 16, "AVX2 FMA on ymm": 8}[PeakISA()]
	if lanes32 == 0 {
		if _, err := PeakRun(tensor.Float32, 1, 1e6); !errors.Is(err, ErrPeakUnknown) {
			t.Errorf("PeakRun without a loop: %v, want ErrPeakUnknown", err)
		}
		t.Skipf("no FMA loop for the own GEMM's path %s", ownPathName())
	}
	for _, c := range []struct {
		dt    tensor.Dtype
		lanes int
	}{{tensor.Float32, lanes32}, {tensor.Float64, lanes32 / 2}} {
		grain := 2 * 12 * 4 * c.lanes
		if g, err := PeakGrain(c.dt); err != nil || g != grain {
			t.Errorf("PeakGrain(%v) = %d (%v), want %d", c.dt, g, err, grain)
		}
		for _, threads := range []int{1, 2, 3} {
			done, err := PeakRun(c.dt, threads, 1e6)
			if want := float64(1e6 / grain * grain); err != nil || done != want {
				t.Errorf("PeakRun(%v, %d, 1e6) = %v (%v), want %v", c.dt, threads, done, err, want)
			}
		}
		if done, _ := PeakRun(c.dt, 2, 1536<<10); done != 1536<<10 {
			t.Errorf("PeakRun(%v, 2, 1536·1024) = %v, want it exactly", c.dt, done)
		}
		if g, err := PeakGFLOPS(c.dt, 1); err != nil || !(g > 0) || math.IsInf(g, 0) {
			t.Errorf("PeakGFLOPS(%v, 1) = %v (%v), want a positive rate", c.dt, g, err)
		}
	}
	for _, bad := range []func() (float64, error){
		func() (float64, error) { return PeakRun(tensor.Float32, 0, 1e6) },
		func() (float64, error) { return PeakRun(tensor.Float32, 1, math.NaN()) },
		func() (float64, error) { return PeakRun(tensor.Int, 1, 1e6) },
	} {
		if _, err := bad(); err == nil {
			t.Error("bad PeakRun arguments: no error")
		}
	}
}
