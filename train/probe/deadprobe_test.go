package probe

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// TestDeadProbeOnHandBuiltNetwork sets the weights of a 2 → 3 → 2 → 1 MLP
// by hand and checks the dead units against the pre-activations worked
// out here, then revives one unit and checks what EverDead remembers.
//
//	layer 0: unit 0: z = x0 (> 0 on every input)    unit 1: z = b (−2, then 3)    unit 2: z = x1 − 1 (> 0 for one input)
//	layer 1: unit 0: z = h0 (= a(x0) > 0)           unit 1: z = −h0 − 8
func TestDeadProbeOnHandBuiltNetwork(t *testing.T) {
	xs := []float64{0.5, 0, 1, 0.5, 2, 1.5, 1.5, -1}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, act := range []activation.Activation{activation.ReLU, activation.GELU} {
			g, _ := graph.New(dt, 1)
			x, _ := g.Input("x", 3, 2) // the training input: the probe does not use it
			mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{3, 2}, Out: 1, Activation: act})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mlp.Forward(x); err != nil {
				t.Fatal(err)
			}
			ps := g.ParamTensors()
			for i, v := range [][]float64{{1, 0, 0, 0, 0, 1}, {0, -2, -1}, {1, 0, 0, -1, 0, 0}, {0, -8}} {
				fillTensor(ps[i].Value, v)
			}
			d := &datasets.Dataset{Name: "hand", Features: 2}
			for _, v := range xs {
				d.X = append(d.X, float32(v))
			}
			const tol = 1e-3
			p, err := NewDeadProbe(g, mlp, d, tol)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Observe(); err != nil {
				t.Fatal(err)
			}
			// By hand: max over inputs of |f'(z)| per unit.
			maxD := [][]float64{make([]float64, 3), make([]float64, 2)}
			minH0 := math.Inf(1)
			for r := 0; r < 4; r++ {
				x0, x1 := xs[2*r], xs[2*r+1]
				h0 := act.F(x0)
				minH0 = math.Min(minH0, h0)
				for j, z := range []float64{x0, -2, x1 - 1} {
					maxD[0][j] = math.Max(maxD[0][j], math.Abs(act.Deriv(z)))
				}
				for j, z := range []float64{h0, -h0 - 8} {
					maxD[1][j] = math.Max(maxD[1][j], math.Abs(act.Deriv(z)))
				}
			}
			var wantDead int
			for layer := range maxD {
				got := p.Units.Dead(layer, tol)
				for j, md := range maxD[layer] {
					if got[j] != (md <= tol) {
						t.Errorf("%v %v layer %d unit %d: dead = %v, max |f'| = %.3g", dt, act, layer, j, got[j], md)
					}
					if md <= tol {
						wantDead++
					}
				}
			}
			if got := p.MaxAbsDeriv(); len(got) != 5 || math.Abs(got[1]-maxD[0][1]) > 1e-6 || math.Abs(got[4]-maxD[1][1]) > 1e-6 {
				t.Errorf("%v %v: MaxAbsDeriv %v, want %v", dt, act, got, maxD)
			}
			// ReLU kills (0,1) and (1,1); GELU only (1,1) (|GELU'(−2)| = 0.085).
			if want := map[activation.Activation]int{activation.ReLU: 2, activation.GELU: 1}[act]; wantDead != want {
				t.Fatalf("%v: %d dead by hand, want %d: the construction is wrong", act, wantDead, want)
			}
			// Unit (0,1) gets bias 3 and is alive; (1,1) stays dead, its max z is −min h0 − 8.
			fillTensor(ps[1].Value, []float64{0, 3, -1})
			if err := p.Observe(); err != nil {
				t.Fatal(err)
			}
			ever, revived := p.EverDead()
			if ever != wantDead || revived != wantDead-1 {
				t.Errorf("%v %v: ever dead %d, revived %d; want %d, %d", dt, act, ever, revived, wantDead, wantDead-1)
			}
			if z := p.DeadMaxPre(); len(z) != 1 || math.Abs(z[0]-(-minH0-8)) > 1e-6 {
				t.Errorf("%v %v: DeadMaxPre %v, want [%v]", dt, act, z, -minH0-8)
			}
		}
	}
}

func fillTensor(t *tensor.Dense, v []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i := range v {
			d[i] = float32(v[i])
		}
	case []float64:
		copy(d, v)
	}
}

func TestDeadBelow(t *testing.T) {
	// ReLU' = 0 up to 0; ELU' = e^z ≤ 1e-3 for z ≤ ln(1e-3) = −6.9078.
	if got := DeadBelow(activation.ReLU, 1e-3); math.Abs(got) > 1e-9 {
		t.Errorf("ReLU: %v, want 0", got)
	}
	if got := DeadBelow(activation.ELU, 1e-3); math.Abs(got-math.Log(1e-3)) > 0.0011 {
		t.Errorf("ELU: %v, want %v", got, math.Log(1e-3))
	}
	// GELU: |Φ(z) + zφ(z)| at the returned z and just above it.
	d := func(z float64) float64 { _, d := geluRef(z); return math.Abs(d) }
	if z := DeadBelow(activation.GELU, 1e-3); d(z) > 1e-3 || d(z+0.002) <= 1e-3 {
		t.Errorf("GELU: %v, |f'| there %v and at +0.002 %v", z, d(z), d(z+0.002))
	}
}
