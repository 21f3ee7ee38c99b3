package probe_test

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// windowExpected is E[sample variance]/variance over n steps of a series
// with autocorrelation β^k: (n − S/n)/(n − 1) with S = Σ_{s,t} β^|s−t| in
// closed form, S = n(1+β)/(1−β) − 2β(1−βⁿ)/(1−β)² (a geometric series
// summed twice; probe.WindowFactor sums it term by term).
func windowExpected(beta float64, n int) float64 {
	fn := float64(n)
	all := fn*(1+beta)/(1-beta) - 2*beta*(1-math.Pow(beta, fn))/((1-beta)*(1-beta))
	return (fn - all/fn) / (fn - 1)
}

// TestSummaryOnSyntheticIID feeds a Watch synthetic i.i.d. gradients
// (per-element means and spreads differ) in both dtypes and checks
// Var(m)/Var(g) against (1−β)/(1+β) and 1/(1−β²), corrected for the
// window, within 4 standard errors, and E[m] against μ and μ/(1−β).
func TestSummaryOnSyntheticIID(t *testing.T) {
	const elems, window, blocks = 200, 2000, 5
	bufs := []probe.Buffer{{Form: probe.EMA, Beta: 0.9}, {Form: probe.HeavyBall, Beta: 0.9}, {Form: probe.EMA, Beta: 0.99}, {Form: probe.HeavyBall, Beta: 0.99}}
	for _, dt := range dtypes {
		ps := []graph.NamedTensor{{Name: "w", Value: tensor.New(tensor.Of(dt), tensor.WithShape(4, elems/4))}}
		burn := probe.BurnIn(0.99, 1e-4)
		w, err := probe.NewWatch(ps, window/blocks, burn, bufs...)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(11, "synthetic")
		g := tensor.New(tensor.Of(dt), tensor.WithShape(4, elems/4))
		var sum, sumSq float64 // of the recorded values, for an independent Σ Var
		var vals [][]float64
		for step := 0; step < burn+window; step++ {
			row := make([]float64, elems)
			for j := range row {
				v := 0.3*math.Cos(float64(j)) + (0.5+float64(j%7)/7)*r.Normal()
				if dt == tensor.Float32 {
					g.Float32s()[j] = float32(v)
					v = float64(float32(v))
				} else {
					g.Float64s()[j] = v
				}
				row[j] = v
			}
			if step >= burn {
				vals = append(vals, row)
			}
			if _, err := w.Add([]*tensor.Dense{g}); err != nil {
				t.Fatal(err)
			}
		}
		s, err := w.Summary()
		if err != nil {
			t.Fatal(err)
		}
		if s.Steps != window || len(s.Grad) != 2 || len(s.Buffers) != 4 || len(s.Buffers[0].Blocks) != blocks || s.Tensors[0] != "w" {
			t.Fatalf("summary: %d steps, %d totals, %d buffers with %d blocks", s.Steps, len(s.Grad), len(s.Buffers), len(s.Buffers[0].Blocks))
		}
		// Σ_j Var(g_j) by the two-pass formula.
		var wantVar float64
		for j := 0; j < elems; j++ {
			sum, sumSq = 0, 0
			for _, row := range vals {
				sum += row[j]
			}
			mean := sum / window
			for _, row := range vals {
				sumSq += (row[j] - mean) * (row[j] - mean)
			}
			wantVar += sumSq / (window - 1)
		}
		if got := s.All().Var; math.Abs(got-wantVar) > 1e-9*wantVar || s.Grad[0].Var != got || s.Grad[1].Elements != elems || s.All().Elements != elems {
			t.Errorf("%v: Σ Var = %v (tensor) and %v (all), want %v", dt, s.Grad[0].Var, got, wantVar)
		}
		for _, c := range s.Buffers {
			stationary, slope := (1-c.Beta)/(1+c.Beta), 1.0
			if c.Form == probe.HeavyBall {
				stationary, slope = 1/(1-c.Beta*c.Beta), 1/(1-c.Beta)
			}
			want := stationary * windowExpected(c.Beta, window)
			if z := (c.Ratio - want) / c.RatioSE; math.Abs(z) > 4 || c.RatioSE > 0.05*want || math.Abs(c.Z()-(c.Ratio-c.Expected)/c.RatioSE) > 1e-12 {
				t.Errorf("%v %v β=%v: Var(m)/Var(g) = %.5g ± %.2g, want %.5g: z = %.1f (Z() = %.3f)", dt, c.Form, c.Beta, c.Ratio, c.RatioSE, want, z, c.Z())
			}
			if math.Abs(c.MeanSlope/slope-1) > 0.03 {
				t.Errorf("%v %v β=%v: E[m] slope %v, want %v", dt, c.Form, c.Beta, c.MeanSlope, slope)
			}
		}
		if !math.IsNaN(s.UnitMean) || !math.IsNaN(s.UnitMeanSq) {
			t.Errorf("no units were watched, but E[f'] = %v, E[f'²] = %v", s.UnitMean, s.UnitMeanSq)
		}
	}
}

// TestWatchUnitsObservesOnlyTheFirstRecordedSteps runs the hand-built
// network of units_test.go with a loss, and checks that the watch reads
// its pre-activations on recorded steps 1 and 2 only: the burn-in step and
// step 4 use other inputs, which would change the averages.
func TestWatchUnitsObservesOnlyTheFirstRecordedSteps(t *testing.T) {
	for _, dt := range dtypes {
		h := buildHandNet(t, dt, true)
		w, _ := probe.NewWatch(h.params, 0, 1)
		u, _ := probe.NewUnits(activation.GELU, 5)
		if err := w.WatchUnits(u, h.m, h.pre, 2); err != nil {
			t.Fatal(err)
		}
		other := make([]float64, len(handX))
		for i := range other {
			other[i] = 3 * handX[i]
		}
		for step, in := range [][]float64{other, handX, handX, other} {
			h.m.Set(h.x, dense(dt, []int{4, 2}, in))
			h.m.Set(h.y, dense(dt, []int{4, 1}, []float64{1, 0, 1, 0}))
			if err := h.m.Run(); err != nil {
				t.Fatal(err)
			}
			gs, _ := h.m.Grads()
			if _, err := w.Add(gs); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		var sum, sumSq float64
		for _, row := range handPre() {
			for _, z := range row {
				sum += geluD1(z)
				sumSq += geluD1(z) * geluD1(z)
			}
		}
		s, err := w.Summary()
		if err != nil {
			t.Fatal(err)
		}
		tol := map[tensor.Dtype]float64{tensor.Float32: 1e-6, tensor.Float64: 1e-14}[dt]
		if math.Abs(s.UnitMean-sum/20) > tol || math.Abs(s.UnitMeanSq-sumSq/20) > tol || u.Examples(0) != 8 {
			t.Errorf("%v: E[f'] = %v, E[f'²] = %v over %d examples, want %v, %v over 8", dt, s.UnitMean, s.UnitMeanSq, u.Examples(0), sum/20, sumSq/20)
		}
		if err := w.WatchUnits(u, h.m, nil, 1); err == nil {
			t.Errorf("%v: no pre-activation nodes for one layer accepted", dt)
		}
	}
}
