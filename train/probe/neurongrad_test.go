package probe

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// TestNeuronGrads checks the graph's gradient and the closed form against
// central differences of L = ½(a(w·x + b) − t)² in float64.
func TestNeuronGrads(t *testing.T) {
	const x, w, z, target, h = 1.5, -1.0, -1.0, 1.0, 1e-6
	for _, a := range []activation.Activation{activation.GELU, activation.SiLU, activation.ReLU} {
		b := z - w*x
		loss := func(w, b float64) float64 { d := a.F(w*x+b) - target; return d * d / 2 }
		fdW := (loss(w+h, b) - loss(w-h, b)) / (2 * h)
		fdB := (loss(w, b+h) - loss(w, b-h)) / (2 * h)
		grads, err := NeuronGrads(a, x, w, z, target, tensor.Float64, tensor.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if len(grads) != 2 || grads[0].Dtype != tensor.Float64 || grads[1].Dtype != tensor.Float32 {
			t.Fatalf("%s: %+v, want one gradient per dtype, in order", a, grads)
		}
		for _, g := range grads {
			tol := 1e-7
			if g.Dtype == tensor.Float32 {
				tol = 1e-5
			}
			if math.Abs(g.Analytic-fdW) > 1e-7 || math.Abs(g.DW-fdW) > tol || math.Abs(g.DB-fdB) > tol {
				t.Errorf("%s %v: dw %v, analytic %v, db %v; central differences give %v and %v", a, g.Dtype, g.DW, g.Analytic, g.DB, fdW, fdB)
			}
			rel := math.Abs(g.DW - fdW)
			if fdW != 0 {
				rel /= math.Abs(fdW)
			}
			if g.RelErr < 0 || math.Abs(g.RelErr-rel) > 100*tol+1e-3*rel {
				t.Errorf("%s %v: relative error %v, want about %v", a, g.Dtype, g.RelErr, rel)
			}
		}
	}
}
