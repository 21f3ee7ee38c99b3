package probe

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// TestStudyNeuronELU checks the study of ELU's neuron (x = 1.5, w = −1,
// t = 1) against closed forms: at z = −1, a = e⁻¹ − 1 and a' = e⁻¹, so
// ∂L/∂w = (a − t)·a'·x and ∂L/∂b = (a − t)·a'. One descent step moves w by
// −lr·g·x and b by −lr·g (g = (a(z0) − t)·a'(z0)), so z by −lr·g·(x² + 1).
func TestStudyNeuronELU(t *testing.T) {
	const x, w, target, lr = 1.5, -1.0, 1.0, 0.1
	s, err := StudyNeuron(activation.ELU, x, w, -1, target, lr, 1, []float64{-1, 0.5}, tensor.Float64, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	a, d := math.Exp(-1)-1, math.Exp(-1)
	dw, db := (a-target)*d*x, (a-target)*d
	elu := func(z float64) (float64, float64) {
		if z < 0 {
			return math.Exp(z) - 1, math.Exp(z)
		}
		return z, 1
	}
	step := func(z0 float64) (z1, loss0, loss1 float64) {
		f, fd := elu(z0)
		z1 = z0 - lr*(f-target)*fd*(x*x+1)
		f1, _ := elu(z1)
		return z1, 0.5 * (f - target) * (f - target), 0.5 * (f1 - target) * (f1 - target)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	cells := s.GradCells()
	if len(cells) != 7 {
		t.Fatalf("GradCells %v, want a, a', analytic and 2 × (∂L/∂w, error)", cells)
	}
	for i, want := range []float64{a, d, dw, dw, 0, dw} {
		near("GradCells["+string(rune('0'+i))+"]", cells[i].(float64), want, 1e-6)
	}
	gv := s.GradValues()
	near("float64.dL_dw", gv["float64.dL_dw"], dw, 1e-12)
	near("float64.dL_db", gv["float64.dL_db"], db, 1e-12)
	near("float32.dL_dw", gv["float32.dL_dw"], dw, 1e-6)
	near("float32.dL_dw_analytic", gv["float32.dL_dw_analytic"], dw, 1e-15)
	if len(gv) != 6 {
		t.Errorf("GradValues %v, want 3 keys per dtype", gv)
	}
	dv := s.DescentValues()
	for i, z0 := range []float64{-1, 0.5} {
		z1, loss0, loss1 := step(z0)
		_, d1 := elu(z1)
		row := s.DescentCells(i)
		for k, want := range []float64{z0, map[bool]float64{true: math.Exp(z0), false: 1}[z0 < 0], loss0, z1, d1, loss1} {
			near("DescentCells", row[k].(float64), want, 1e-12)
		}
		key := map[float64]string{-1: "z0_-1.", 0.5: "z0_0.5."}[z0]
		near(key+"z_end", dv[key+"z_end"], z1, 1e-12)
		near(key+"loss_end", dv[key+"loss_end"], loss1, 1e-12)
		near(key+"d1_end", dv[key+"d1_end"], d1, 1e-12)
	}
	if len(dv) != 6 {
		t.Errorf("DescentValues %v, want 3 keys per start", dv)
	}
	if _, err := StudyNeuron(activation.ELU, x, w, -1, target, lr, 1, nil, tensor.Int); err == nil {
		t.Error("dtype Int: no error")
	}
}
