package optim_test

// ClipGradNorm against a norm computed another way (a running hypot, which
// never squares), in both dtypes.

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

func hypotNorm(gs [][]float64) float64 {
	n := 0.0
	for _, g := range gs {
		for _, v := range g {
			n = math.Hypot(n, v)
		}
	}
	return n
}

func TestClipGradNorm(t *testing.T) {
	for _, dt := range dtypes {
		raw := [][]float64{asStored(dt, randn("c1", 100, 1)), asStored(dt, randn("c2", 7, 3)), asStored(dt, randn("c3", 70000, 0.01))}
		shapes := [][]int{{10, 10}, {7}, {700, 100}}
		norm := hypotNorm(raw)
		for _, maxNorm := range []float64{0.1, norm / 2, norm * 2, math.Inf(1)} {
			grads := []*tensor.Dense{dense(dt, shapes[0], raw[0]), nil, dense(dt, shapes[1], raw[1]), dense(dt, shapes[2], raw[2])}
			got, err := optim.ClipGradNorm(grads, maxNorm)
			if err != nil {
				t.Fatal(err)
			}
			// hypot is accurate to 1 ulp per step, so allow n·ulp drift.
			if math.Abs(got-norm) > 1e-11*norm {
				t.Fatalf("%v: norm %.17g, want %.17g", dt, got, norm)
			}
			coef := maxNorm / (norm + 1e-6)
			for i, g := range []*tensor.Dense{grads[0], grads[2], grads[3]} {
				want := raw[i]
				if coef < 1 {
					want = make([]float64, len(raw[i]))
					for j, v := range raw[i] {
						want[j] = v * coef
					}
					mustClose(t, "clipped", graph.Float64s(g), want, tol{abs: 0, rel: 1e-7})
				} else if !equalBits(graph.Float64s(g), want) {
					t.Fatalf("%v max norm %v ≥ norm %v: gradients changed", dt, maxNorm, norm)
				}
			}
			if coef < 1 {
				after := hypotNorm([][]float64{graph.Float64s(grads[0]), graph.Float64s(grads[2]), graph.Float64s(grads[3])})
				if math.Abs(after-maxNorm) > 1e-6*maxNorm {
					t.Fatalf("%v: norm after clipping %v, want %v", dt, after, maxNorm)
				}
			}
		}
	}
}

// float64 squares overflow above 1e154; the norm must stay finite.
func TestClipGradNormHugeGradients(t *testing.T) {
	g := dense(tensor.Float64, []int{3}, []float64{3e200, -4e200, 0})
	n, err := optim.ClipGradNorm([]*tensor.Dense{g}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(n-5e200) > 1e-15*5e200 {
		t.Fatalf("norm %v, want 5e200", n)
	}
	mustClose(t, "clipped", graph.Float64s(g), []float64{0.6, -0.8, 0}, tol{abs: 0, rel: 1e-15})
}

func TestClipGradNormErrors(t *testing.T) {
	g := func() *tensor.Dense { return dense(tensor.Float32, []int{2, 2}, []float64{1, 2, 3, 4}) }
	for _, m := range []float64{0, -1, math.NaN()} {
		if _, err := optim.ClipGradNorm([]*tensor.Dense{g()}, m); err == nil || !strings.Contains(err.Error(), "max norm") {
			t.Errorf("max norm %v: got %v", m, err)
		}
	}
	ints := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))
	if _, err := optim.ClipGradNorm([]*tensor.Dense{g(), ints}, 1); err == nil || !strings.Contains(err.Error(), "grads[1] is int") {
		t.Errorf("int gradient: got %v", err)
	}
	for _, dt := range dtypes {
		a, b := dense(dt, []int{2}, []float64{10, 10}), dense(dt, []int{2, 2}, []float64{1, 2, 3, 4})
		if dt == tensor.Float32 {
			b.Float32s()[3] = float32(math.Inf(1))
		} else {
			b.Float64s()[3] = math.NaN()
		}
		_, err := optim.ClipGradNorm([]*tensor.Dense{a, b}, 1)
		if err == nil || !strings.Contains(err.Error(), "grads[1]") || !strings.Contains(err.Error(), "element 3") {
			t.Fatalf("%v: got %v", dt, err)
		}
		if !equalBits(graph.Float64s(a), []float64{10, 10}) {
			t.Fatalf("%v: gradients scaled despite the error", dt)
		}
	}
	if n, err := optim.ClipGradNorm(nil, 1); n != 0 || err != nil {
		t.Errorf("no gradients: %v, %v", n, err)
	}
}

// The norm is summed in fixed blocks, so it is the same on any number of
// cores, bit for bit.
func TestClipGradNormIndependentOfCores(t *testing.T) {
	raw := randn("cores", 300_001, 1)
	var norms []float64
	for _, procs := range []int{1, 2, 3} {
		prev := runtime.GOMAXPROCS(procs)
		n, err := optim.ClipGradNorm([]*tensor.Dense{dense(tensor.Float64, []int{len(raw)}, raw)}, math.Inf(1))
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		norms = append(norms, n)
	}
	if !equalBits(norms, []float64{norms[0], norms[0], norms[0]}) {
		t.Fatalf("norm depends on GOMAXPROCS: %v", norms)
	}
}

// GradNorm is ClipGradNorm's norm bit for bit, whether ClipGradNorm clips
// or only measures, skips nil entries, and leaves the gradients alone.
func TestGradNormIsClipGradNormsNorm(t *testing.T) {
	for _, dt := range dtypes {
		raw := [][]float64{asStored(dt, randn("gn1", 70_001, 0.01)), asStored(dt, randn("gn2", 13, 2))}
		fresh := func() []*tensor.Dense {
			return []*tensor.Dense{dense(dt, []int{70_001}, raw[0]), nil, dense(dt, []int{13}, raw[1])}
		}
		grads := fresh()
		n, err := optim.GradNorm(grads)
		if err != nil {
			t.Fatal(err)
		}
		if want := hypotNorm(raw); math.Abs(n-want) > 1e-11*want {
			t.Fatalf("%v: norm %.17g, want %.17g", dt, n, want)
		}
		for i, g := range []*tensor.Dense{grads[0], grads[2]} {
			if !equalBits(graph.Float64s(g), raw[i]) {
				t.Fatalf("%v: GradNorm changed the gradients", dt)
			}
		}
		for _, maxNorm := range []float64{math.Inf(1), n / 3} {
			c, err := optim.ClipGradNorm(fresh(), maxNorm)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(c) != math.Float64bits(n) {
				t.Fatalf("%v: ClipGradNorm(max %v) returned %.17g, GradNorm %.17g", dt, maxNorm, c, n)
			}
		}
	}
	if n, err := optim.GradNorm([]*tensor.Dense{nil, nil}); n != 0 || err != nil {
		t.Fatalf("only nil gradients: %v, %v", n, err)
	}
}

// A NaN or ±Inf gradient is an error from both, naming it and wrapping
// graph.ErrNonFinite, as Step's.
func TestGradNormNonFinite(t *testing.T) {
	for _, dt := range dtypes {
		for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
			g := dense(dt, []int{3}, []float64{1, 2, 3})
			set(g, []float64{1, bad, 3})
			_, err1 := optim.GradNorm([]*tensor.Dense{nil, g})
			_, err2 := optim.ClipGradNorm([]*tensor.Dense{nil, g}, 1)
			for _, err := range []error{err1, err2} {
				if !errors.Is(err, graph.ErrNonFinite) || !strings.Contains(fmt.Sprint(err), "grads[1]") || !strings.Contains(fmt.Sprint(err), "element 1") {
					t.Fatalf("%v %v: got %v", dt, bad, err)
				}
			}
		}
	}
}

// The norm of a training step allocates nothing, also after a garbage
// collection (which empties sync.Pools).
func TestGradNormDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	g := []*tensor.Dense{dense(tensor.Float32, []int{bigN}, bigInputs[0]), dense(tensor.Float64, []int{5}, randn("gna", 5, 1))}
	if _, err := optim.GradNorm(g); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		runtime.GC()
		if _, err := optim.GradNorm(g); err != nil {
			panic(err)
		}
		if _, err := optim.ClipGradNorm(g, 1e9); err != nil {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per norm", allocs)
	}
}
