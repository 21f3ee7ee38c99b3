package probe

import (
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// TestDeadProbeMetricsByHand uses the 2 → 3 → 2 → 1 network of
// TestDeadProbeOnHandBuiltNetwork (bias −2 on unit (0,1)) on the inputs
// (0.5, 0), (1, 0.5), (2, 1.5), (1.5, −1). By hand, for ReLU: max |f'| per
// unit is 1, 0, 1 | 1, 0 (units (0,1) and (1,1) dead, exactly), so 2 of 5
// dead, median 1, one dead per layer; the dead units' largest z are −2
// and −min x0 − 8 = −8.5 (median −5.25); f'(z)² is 1 on 4 + 0 + 1 + 4 + 0
// = 9 of the 20 unit-examples. For GELU, |GELU'(−2)| = 0.085 > tol: only
// (1,1) is dead, and not exactly (GELU' ≠ 0 in float64 at z ≈ −8.3).
func TestDeadProbeMetricsByHand(t *testing.T) {
	if got := DeadMetrics(2); !slices.Equal(got, []string{"dead_fraction", "dead_fraction_exact", "median_max_abs_deriv", "dead_layer1", "dead_layer2"}) {
		t.Errorf("DeadMetrics(2) = %v", got)
	}
	for _, tc := range []struct {
		act     activation.Activation
		metrics []float64 // NaN: not checked
		end     map[string]float64
	}{
		{activation.ReLU, []float64{0.4, 0.4, 1, 1, 1}, map[string]float64{"ever_dead": 2, "revived": 0, "dead_max_z_median": -5.25, "mean_sq_deriv": 0.45}},
		{activation.GELU, []float64{0.2, 0, math.NaN(), 0, 1}, map[string]float64{"ever_dead": 1, "revived": 0, "dead_max_z_median": -8 - activation.GELU.F(0.5), "mean_sq_deriv": math.NaN()}},
	} {
		g, _ := graph.New(tensor.Float64, 1)
		x, _ := g.Input("x", 4, 2)
		mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{3, 2}, Out: 1, Activation: tc.act})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mlp.Forward(x); err != nil {
			t.Fatal(err)
		}
		for i, v := range [][]float64{{1, 0, 0, 0, 0, 1}, {0, -2, -1}, {1, 0, 0, -1, 0, 0}, {0, -8}} {
			fillTensor(g.ParamTensors()[i].Value, v)
		}
		d := &datasets.Dataset{Name: "hand", Features: 2, X: []float32{0.5, 0, 1, 0.5, 2, 1.5, 1.5, -1}}
		p, err := NewDeadProbe(g, mlp, d, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Observe(); err != nil {
			t.Fatal(err)
		}
		got := p.Metrics()
		if len(got) != len(tc.metrics) {
			t.Fatalf("%v: Metrics %v, want %v", tc.act, got, tc.metrics)
		}
		for i, w := range tc.metrics {
			if !math.IsNaN(w) && math.Abs(got[i]-w) > 1e-12 {
				t.Errorf("%v: %s = %v, want %v", tc.act, DeadMetrics(2)[i], got[i], w)
			}
		}
		end := p.EndValues()
		for k, w := range tc.end {
			if !math.IsNaN(w) && math.Abs(end[k]-w) > 1e-12 {
				t.Errorf("%v: EndValues[%s] = %v, want %v", tc.act, k, end[k], w)
			}
		}
		if len(end) != 4 {
			t.Errorf("%v: EndValues %v, want 4 values", tc.act, end)
		}
	}
}

// TestMedianIgnoresNonFinite checks median against the middle of the
// finite values sorted by hand.
func TestMedianIgnoresNonFinite(t *testing.T) {
	if got := median([]float64{3, math.NaN(), -1, math.Inf(1), 10, 2}); got != 2.5 {
		t.Errorf("median = %v, want (2 + 3)/2", got)
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
}
