package probe_test

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/probe"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

var dtypes = []tensor.Dtype{tensor.Float32, tensor.Float64}

// dense and copyInto write float64 values into a tensor of either dtype.
var dense, copyInto = graphtest.MustDense, graphtest.MustSet

// geluD1 is GELU'(z) = Φ(z) + z·φ(z), written out here independently of
// package activation.
func geluD1(z float64) float64 {
	return 0.5*math.Erfc(-z/math.Sqrt2) + z*math.Exp(-z*z/2)/math.Sqrt(2*math.Pi)
}

// handNet is a one-hidden-layer MLP (2 inputs, 5 hidden units) whose
// weights are set by hand, and four inputs, all with x0 ∈ [0.5, 2] and
// x1 ∈ [−1, 1]:
//
//	unit 0: z = x0          > 0 always: alive for every activation
//	unit 1: z = −1          ReLU dead; GELU |f'| = 0.0833: alive
//	unit 2: z = −5          ReLU dead; GELU |f'| ≈ 7e-6: dead at 1e-3, alive at 1e-6
//	unit 3: z = −x0 − 3     ReLU dead; GELU |f'| = 2.8e-3 at its largest z, −3.5: alive
//	unit 4: z = x1 − 0.5    positive for x1 = 1: alive for ReLU
var (
	handW = []float64{1, 0, 0, 0, 0, 0, -1, 0, 0, 1}
	handB = []float64{0, -1, -5, -3, -0.5}
	handX = []float64{0.5, -1, 1, 0, 2, 1, 1.5, 0.25}
)

// handPre computes the pre-activations of handNet by hand.
func handPre() [][]float64 {
	var out [][]float64
	for r := 0; r < 4; r++ {
		x0, x1 := handX[2*r], handX[2*r+1]
		out = append(out, []float64{x0, -1, -5, -x0 - 3, x1 - 0.5})
	}
	return out
}

// hand is handNet built in one dtype: its input x (4×2), the target y (4×1)
// of an MSE loss if it has one, the pre-activations and parameters, and a
// machine that keeps the pre-activations.
type hand struct {
	x, y   *G.Node
	pre    []*G.Node
	params []graph.NamedTensor
	m      *graph.Machine
}

// buildHandNet builds handNet in dtype dt with its hand-set weights, with
// an MSE loss if withLoss.
func buildHandNet(t *testing.T, dt tensor.Dtype, withLoss bool) hand {
	t.Helper()
	g, _ := graph.New(dt, 1)
	x, _ := g.Input("x", 4, 2)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{5}, Out: 1, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	out, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	var y, loss *G.Node
	if withLoss {
		y, _ = g.Input("y", 4, 1)
		if loss, err = nn.MSELoss(out, y); err != nil {
			t.Fatal(err)
		}
	}
	ps := g.ParamTensors()
	copyInto(ps[0].Value, handW)
	copyInto(ps[1].Value, handB)
	m, err := g.Compile(loss, graph.Keep(mlp.Pre...))
	if err != nil {
		t.Fatal(err)
	}
	return hand{x: x, y: y, pre: mlp.Pre, params: ps, m: m}
}

func TestUnitsDeadOnHandBuiltNetwork(t *testing.T) {
	for _, dt := range dtypes {
		h := buildHandNet(t, dt, false)
		ds := &datasets.Dataset{Name: "hand", Features: 2, X: f32(handX)}
		l, err := datasets.NewLoader(ds, datasets.LoaderConfig{BatchSize: 4, Dtype: dt})
		if err != nil {
			t.Fatal(err)
		}
		pre := handPre()
		for _, tc := range []struct {
			act activation.Activation
			d1  func(float64) float64
		}{
			{activation.ReLU, func(z float64) float64 { return map[bool]float64{true: 1}[z > 0] }},
			{activation.GELU, geluD1},
		} {
			u, err := probe.NewUnits(tc.act, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := u.ObserveLoader(h.m, h.x, h.pre, l); err != nil {
				t.Fatal(err)
			}
			if u.Examples(0) != 4 {
				t.Errorf("%v %v: %d examples observed, want 4", dt, tc.act, u.Examples(0))
			}
			for _, tol := range []float64{0, 1e-6, 1e-3, 0.05} {
				dead := u.Dead(0, tol)
				want := 0
				for j := 0; j < 5; j++ {
					mx := 0.0
					for _, row := range pre {
						mx = math.Max(mx, math.Abs(tc.d1(row[j])))
					}
					if (mx <= tol) != dead[j] {
						t.Errorf("%v %v tol %g unit %d: dead = %v, but max |f'| = %.3g", dt, tc.act, tol, j, dead[j], mx)
					}
					if mx <= tol {
						want++
					}
				}
				if got := u.DeadCount(0, tol); got != want {
					t.Errorf("%v %v tol %g: %d dead, want %d", dt, tc.act, tol, got, want)
				}
				if got := u.DeadFraction(tol); got != float64(want)/5 {
					t.Errorf("%v %v tol %g: dead fraction %v, want %v", dt, tc.act, tol, got, float64(want)/5)
				}
			}
			// The pattern the comment on handNet promises.
			wantDead := map[string][]bool{
				"relu":      {false, true, true, true, false},
				"gelu@1e-3": {false, false, true, false, false},
				"gelu@1e-6": {false, false, false, false, false},
			}
			check := func(k string, got []bool) {
				for j := range got {
					if got[j] != wantDead[k][j] {
						t.Errorf("%v %s: dead %v, want %v", dt, k, got, wantDead[k])
						return
					}
				}
			}
			if tc.act == activation.ReLU {
				check("relu", u.Dead(0, 0))
			} else {
				check("gelu@1e-3", u.Dead(0, 1e-3))
				check("gelu@1e-6", u.Dead(0, 1e-6))
			}
			maxZ := u.MaxPre(0)
			for j, want := range []float64{2, -1, -5, -3.5, 0.5} {
				if math.Abs(maxZ[j]-want) > 1e-6 {
					t.Errorf("%v %v unit %d: max z %v, want %v", dt, tc.act, j, maxZ[j], want)
				}
			}
			// Mean of f' and f'² over the 20 (example, unit) pairs.
			var s, s2 float64
			for _, row := range pre {
				for _, z := range row {
					s += tc.d1(z)
					s2 += tc.d1(z) * tc.d1(z)
				}
			}
			mean, meanSq := u.DerivMoments()
			if math.Abs(mean-s/20) > 1e-6 || math.Abs(meanSq-s2/20) > 1e-6 {
				t.Errorf("%v %v: E[f'] = %v, E[f'²] = %v, want %v, %v", dt, tc.act, mean, meanSq, s/20, s2/20)
			}
		}
	}
}

func f32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func TestUnitsObserveCountsOnlyRealRows(t *testing.T) {
	for _, dt := range dtypes {
		u, _ := probe.NewUnits(activation.ReLU, 2)
		// Row 0 is real (both units negative); row 1 is padding that would
		// make both units alive.
		if err := u.Observe(0, dense(dt, []int{2, 2}, []float64{-1, -2, 3, 4}), 1); err != nil {
			t.Fatal(err)
		}
		if got := u.DeadCount(0, 0); got != 2 {
			t.Errorf("%v: %d dead, want 2 (the padding row must be ignored)", dt, got)
		}
		u.Reset()
		if got := u.Dead(0, 0); got[0] || got[1] {
			t.Errorf("%v: after Reset no examples are observed, so no unit is dead; got %v", dt, got)
		}
	}
}

func TestUnitsRejectBadInput(t *testing.T) {
	if _, err := probe.NewUnits(activation.Activation{}, 3); err == nil {
		t.Error("zero activation accepted")
	}
	if _, err := probe.NewUnits(activation.GELU, 3, 0); err == nil || !strings.Contains(err.Error(), "layer 1") {
		t.Errorf("width 0: %v", err)
	}
	u, _ := probe.NewUnits(activation.GELU, 3)
	for _, tc := range []struct {
		layer, rows int
		pre         *tensor.Dense
		want        string
	}{
		{1, 1, dense(tensor.Float64, []int{1, 3}, []float64{0, 0, 0}), "layer 1"},
		{0, 1, dense(tensor.Float64, []int{1, 2}, []float64{0, 0}), "want (rows, 3)"},
		{0, 2, dense(tensor.Float64, []int{1, 3}, []float64{0, 0, 0}), "2 rows"},
		{0, 1, dense(tensor.Float32, []int{1, 3}, []float64{0, math.NaN(), 0}), "unit 1 in row 0 is NaN"},
		{0, 1, dense(tensor.Float64, []int{1, 3}, []float64{0, 0, math.Inf(-1)}), "-Inf"},
	} {
		if err := u.Observe(tc.layer, tc.pre, tc.rows); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Observe(%d, %v, %d): error %v, want one mentioning %q", tc.layer, tc.pre.Shape(), tc.rows, err, tc.want)
		}
	}
	if u.Examples(0) != 0 {
		t.Errorf("rejected observations were counted: %d examples", u.Examples(0))
	}
	if m, s := u.DerivMoments(); !math.IsNaN(m) || !math.IsNaN(s) {
		t.Errorf("moments before any observation: %v %v, want NaN", m, s)
	}
}
