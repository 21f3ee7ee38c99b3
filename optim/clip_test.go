package optim_test

// ClipGradNorm against a norm computed another way (a running hypot, which
// never squares), in both dtypes.

import (
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
