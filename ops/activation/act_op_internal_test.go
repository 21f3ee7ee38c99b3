package activation

import (
	"runtime"
	"testing"

	"gorgonia.org/tensor"
)

// Gorgonia mutates op types during inference, so Type must not hand out a
// shared value.
func TestTypeIsFreshEachCall(t *testing.T) {
	op := newActOp(GELU, 1)
	if a, b := op.Type(), op.Type(); a == b {
		t.Error("Type returned the same value twice")
	}
}

// With ReturnsPtr and OverwritesInput the VM may pass an input as the
// destination; the kernels must give the same result in place.
func TestUsePreallocDoToleratesAliasing(t *testing.T) {
	for _, order := range []int{0, 1, 2} {
		op := newActOp(GELUTanh, order)
		xs := []float64{-3, -0.5, 0.25, 2}
		x := tensor.New(tensor.WithShape(4), tensor.WithBacking(append([]float64(nil), xs...)))
		gs := []float64{1.5, -2, 0.5, 3}
		g := tensor.New(tensor.WithShape(4), tensor.WithBacking(append([]float64(nil), gs...)))
		var err error
		if order == 0 {
			_, err = op.UsePreallocDo(x, x)
		} else {
			_, err = op.UsePreallocDo(g, x, g) // destination aliases the gradient
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, xi := range xs {
			var want, got float64
			switch order {
			case 0:
				want, got = GELUTanh.F(xi), x.Float64s()[i]
			case 1:
				want, got = gs[i]*GELUTanh.Deriv(xi), g.Float64s()[i]
			case 2:
				want, got = gs[i]*GELUTanh.Deriv2(xi), g.Float64s()[i]
			}
			if got != want {
				t.Errorf("order %d, x=%v: in place %v, want %v", order, xi, got, want)
			}
		}
	}
}

// The output opkit.Buffer is reused across runs: Do must not allocate a new
// tensor each time.
func TestDoReusesItsBuffer(t *testing.T) {
	op := newActOp(GELU, 0)
	x := tensor.New(tensor.WithShape(8), tensor.Of(tensor.Float32))
	a, err := op.Do(x)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := op.Do(x)
	if a != b {
		t.Error("Do allocated a new output on the second call")
	}
	if raceEnabled {
		return // the race detector makes sync.Pool drop the kernels' loops at random
	}
	if allocs := testing.AllocsPerRun(20, func() { op.Do(x) }); allocs != 0 {
		t.Errorf("Do allocates %v times per call, want 0", allocs)
	}
}

// The kernels' loop objects survive garbage collections (a sync.Pool
// would be emptied by one, and the next training step would allocate).
func TestKernelsAllocateNothingAcrossGC(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	x32, d32 := make([]float32, 1<<15), make([]float32, 1<<15)
	x64, d64 := make([]float64, 1<<15), make([]float64, 1<<15)
	for i := range x32 {
		x32[i], x64[i] = float32(i%200)/20-5, float64(i%200)/20-5
	}
	for _, a := range []Activation{GELU, ReLU} {
		run(a, 0, d32, x32, nil, false) // the first makes the loops
		run(a, 0, d64, x64, nil, false)
		if n := testing.AllocsPerRun(3, func() {
			runtime.GC()
			runtime.GC()
			run(a, 0, d32, x32, nil, false)
			run(a, 0, d64, x64, nil, false)
		}); n != 0 {
			t.Errorf("%s after two GCs: %v allocations per call, want 0", a, n)
		}
	}
}
