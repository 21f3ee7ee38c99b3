package probe

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// geluRef is GELU and GELU' written here from math.Erfc, independently of
// package activation.
func geluRef(z float64) (f, d float64) {
	phi := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	cdf := 0.5 * math.Erfc(-z/math.Sqrt2)
	return z * cdf, cdf + z*phi
}

// Through the graph, ReLU's gradient at z = −1 is exactly 0 and GELU's
// matches (a(z) − t)·a'(z)·x (∂L/∂b without the x).
func TestNeuronGradient(t *testing.T) {
	const x, w, z, target = 1.5, -1.0, -1.0, 1.0
	a, d := geluRef(z)
	wantW, wantB := (a-target)*d*x, (a-target)*d
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-13}, {tensor.Float32, 2e-6}} {
		n, err := NewNeuron(activation.ReLU, tc.dt, x, w, z, target)
		if err != nil {
			t.Fatal(err)
		}
		dw, db, loss, err := n.Grads()
		if err != nil {
			t.Fatal(err)
		}
		if dw != 0 || db != 0 || loss != 0.5 {
			t.Errorf("%v ReLU at z = −1: ∂L/∂w = %v, ∂L/∂b = %v, L = %v; want exactly 0, 0, ½", tc.dt, dw, db, loss)
		}
		if n, err = NewNeuron(activation.GELU, tc.dt, x, w, z, target); err != nil {
			t.Fatal(err)
		}
		if got := n.Z(); got != z {
			t.Fatalf("%v: z = %v, want −1", tc.dt, got)
		}
		dw, db, _, err = n.Grads()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(dw-wantW) > tc.tol*math.Abs(wantW) || math.Abs(db-wantB) > tc.tol*math.Abs(wantB) {
			t.Errorf("%v GELU at z = −1: ∂L/∂w = %.10g, ∂L/∂b = %.10g; want %.10g, %.10g", tc.dt, dw, db, wantW, wantB)
		}
	}
}

// Gradient descent on (w, b) moves z by −lr·g·(x² + 1) per step, with
// g = (a(z) − t)·a'(z): the same steps worked out here in float64.
func TestNeuronDescend(t *testing.T) {
	const x, w, lr, target, steps = 1.5, -1.0, 0.1, 1.0, 30
	for _, z0 := range []float64{-3, -1, -0.5} {
		n, err := NewNeuron(activation.GELU, tensor.Float64, x, w, z0, target)
		if err != nil {
			t.Fatal(err)
		}
		zs, loss0, loss, err := n.Descend(lr, steps)
		if err != nil {
			t.Fatal(err)
		}
		if len(zs) != steps+1 {
			t.Fatalf("%d values of z, want %d", len(zs), steps+1)
		}
		z := z0
		for i := 0; i <= steps; i++ {
			if math.Abs(zs[i]-z) > 1e-12 {
				t.Fatalf("from %g, step %d: z = %.15g, want %.15g", z0, i, zs[i], z)
			}
			f, d := geluRef(z)
			if i == steps {
				if want := 0.5 * (f - target) * (f - target); math.Abs(loss-want) > 1e-12 {
					t.Errorf("from %g: final loss %v, want %v", z0, loss, want)
				}
				break
			}
			z -= lr * (f - target) * d * (x*x + 1)
		}
		if f, _ := geluRef(z0); math.Abs(loss0-0.5*(f-target)*(f-target)) > 1e-15 {
			t.Errorf("from %g: loss at start %v", z0, loss0)
		}
	}
}
