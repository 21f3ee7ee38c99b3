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

// TestNeuronDescent checks descent against closed forms. Where ReLU is
// linear, L = ½(z − t)² and a step moves w by −lr(z − t)x and b by
// −lr(z − t), so z − t shrinks by 1 − lr(x² + 1) = 0.675 per step; from
// z = −1 ReLU passes no gradient and z stays.
func TestNeuronDescent(t *testing.T) {
	const x, w, target, lr = 1.5, -1.0, 1.0, 0.1
	d, err := NeuronDescent(activation.ReLU, x, w, 0.5, target, lr, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Zs) != 5 {
		t.Fatalf("%d values of z for 4 steps, want 5", len(d.Zs))
	}
	for k, z := range d.Zs {
		if want := target + (0.5-target)*math.Pow(0.675, float64(k)); math.Abs(z-want) > 1e-12 {
			t.Errorf("z after %d steps = %v, want %v", k, z, want)
		}
	}
	if wantEnd := 0.5 * math.Pow(0.5*math.Pow(0.675, 4), 2); math.Abs(d.Loss0-0.125) > 1e-15 || math.Abs(d.Loss-wantEnd) > 1e-12 || d.End() != d.Zs[4] {
		t.Errorf("loss %v → %v, end %v; want 0.125 → %v", d.Loss0, d.Loss, d.End(), wantEnd)
	}
	s := d.Series("relu")
	if s.Name != "relu" || len(s.X) != 5 || s.X[4] != 4 || s.Y[4] != d.Zs[4] {
		t.Errorf("Series = %+v, want z against steps 0…4", s)
	}
	dead, err := NeuronDescent(activation.ReLU, x, w, -1, target, lr, 3)
	if err != nil || dead.End() != -1 || dead.Loss != 0.5 {
		t.Errorf("dead ReLU: z %v, loss %v, %v; want −1, 0.5", dead.Zs, dead.Loss, err)
	}
}
