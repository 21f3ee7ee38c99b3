package main

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// TestSingleNeuronGradient: through the graph, ReLU's ∂L/∂w at z = −1 is
// exactly 0 and GELU's matches (a(z) − t)·a'(z)·x with a and a' written
// here from math.Erfc, independently of package activation.
func TestSingleNeuronGradient(t *testing.T) {
	const z = -1.0
	phi := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	cdf := 0.5 * math.Erfc(-z/math.Sqrt2)
	a, d := z*cdf, cdf+z*phi
	wantW, wantB := (a-neuronT)*d*neuronX, (a-neuronT)*d
	if math.Abs(d-(-0.0833155)) > 1e-7 {
		t.Fatalf("test's own GELU'(−1) = %v", d)
	}
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-13}, {tensor.Float32, 2e-6}} {
		n, err := newNeuron(activation.ReLU, tc.dt, z)
		if err != nil {
			t.Fatal(err)
		}
		dw, db, loss, err := n.grads()
		if err != nil {
			t.Fatal(err)
		}
		if dw != 0 || db != 0 || loss != 0.5 {
			t.Errorf("%v ReLU at z = −1: ∂L/∂w = %v, ∂L/∂b = %v, L = %v; want exactly 0, 0, ½", tc.dt, dw, db, loss)
		}
		n, err = newNeuron(activation.GELU, tc.dt, z)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.z(); got != z {
			t.Fatalf("%v: z = %v, want −1", tc.dt, got)
		}
		dw, db, _, err = n.grads()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(dw-wantW) > tc.tol*math.Abs(wantW) || math.Abs(db-wantB) > tc.tol*math.Abs(wantB) {
			t.Errorf("%v GELU at z = −1: ∂L/∂w = %.10g, ∂L/∂b = %.10g; want %.10g, %.10g", tc.dt, dw, db, wantW, wantB)
		}
	}
}

// TestDeadCountingOnHandBuiltNetwork sets the weights of a 2 → 3 → 2 → 1
// MLP by hand and checks the dead units found through graph.Keep on
// mlp.Pre, as the sweep does, against the pre-activations worked out here.
//
//	layer 0: unit 0: z = x0 (> 0 on every input)    unit 1: z = −2    unit 2: z = x1 − 1 (> 0 for one input)
//	layer 1: unit 0: z = h0 (= a(x0) > 0)           unit 1: z = −h0 − 8
func TestDeadCountingOnHandBuiltNetwork(t *testing.T) {
	xs := []float64{0.5, 0, 1, 0.5, 2, 1.5, 1.5, -1}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, act := range []activation.Activation{activation.ReLU, activation.GELU} {
			g, _ := graph.New(dt, 1)
			x, _ := g.Input("x", 3, 2) // batches of 3: the second is padded
			mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{3, 2}, Out: 1, Activation: act})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mlp.Forward(x); err != nil {
				t.Fatal(err)
			}
			ps := g.ParamTensors()
			for i, v := range [][]float64{{1, 0, 0, 0, 0, 1}, {0, -2, -1}, {1, 0, 0, -1, 0, 0}, {0, -8}} {
				fill(ps[i].Value, v)
			}
			m, err := g.Compile(nil, graph.Keep(mlp.Pre...))
			if err != nil {
				t.Fatal(err)
			}
			d := &datasets.Dataset{Name: "hand", Features: 2}
			for _, v := range xs {
				d.X = append(d.X, float32(v))
			}
			l, _ := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 3, Dtype: dt})
			u, _ := probe.NewUnits(act, 3, 2)
			if err := u.ObserveLoader(m, x, mlp.Pre, l); err != nil {
				t.Fatal(err)
			}
			// By hand: max over inputs of |f'(z)| per unit.
			maxD := [][]float64{make([]float64, 3), make([]float64, 2)}
			for r := 0; r < 4; r++ {
				x0, x1 := xs[2*r], xs[2*r+1]
				h0 := act.F(x0)
				for j, z := range []float64{x0, -2, x1 - 1} {
					maxD[0][j] = math.Max(maxD[0][j], math.Abs(act.Deriv(z)))
				}
				for j, z := range []float64{h0, -h0 - 8} {
					maxD[1][j] = math.Max(maxD[1][j], math.Abs(act.Deriv(z)))
				}
			}
			for _, tol := range []float64{0, 1e-3} {
				for layer := range maxD {
					got := u.Dead(layer, tol)
					for j, md := range maxD[layer] {
						if got[j] != (md <= tol) {
							t.Errorf("%v %v tol %g layer %d unit %d: dead = %v, max |f'| = %.3g", dt, act, tol, layer, j, got[j], md)
						}
					}
				}
			}
			// The pattern by construction: ReLU kills units (0,1) and (1,1);
			// GELU keeps (0,1) (|GELU'(−2)| = 0.085) and loses (1,1) only at 1e-3.
			want := map[activation.Activation][2]int{activation.ReLU: {2, 2}, activation.GELU: {0, 1}}[act]
			if got := [2]int{u.DeadCount(0, 0) + u.DeadCount(1, 0), u.DeadCount(0, 1e-3) + u.DeadCount(1, 1e-3)}; got != want {
				t.Errorf("%v %v: dead at tol 0 and 1e-3: %v, want %v", dt, act, got, want)
			}
		}
	}
}

func fill(t *tensor.Dense, v []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i := range v {
			d[i] = float32(v[i])
		}
	case []float64:
		copy(d, v)
	}
}

func tiny(dir string) config {
	return config{Out: dir, Seed: 3, Acts: experiment.Activations{activation.ReLU, activation.GELU}, LRs: experiment.Floats{0.1},
		Biases: experiment.Strings{"default", "-100"}, Hidden: experiment.Ints{8}, Batch: 16, Steps: 20, NeuronSteps: 40,
		ProbeEvery: 10, ProbeN: 50, TestN: 100, TrainN: 1200, Momentum: 0.9, Tol: 1e-3, Workers: 2, DPI: 30, Quiet: true,
		Args: []string{"dying-neurons", "-steps", "20"}}
}

// TestRunTinyWritesTheReport runs the whole program at a tiny size twice,
// with one and with two workers, checks the first run's files and that
// the second wrote the same bytes.
func TestRunTinyWritesTheReport(t *testing.T) {
	runs, dir := extest.RunTwice(t, func(dir string, first bool) ([]*runResult, error) {
		c := tiny(dir)
		if first {
			c.Workers = 1
		}
		return run(c)
	})
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 2 activations × 1 lr × 2 bias inits", len(runs))
	}
	for _, r := range runs {
		if steps := r.Curve.Steps; len(steps) != 3 || steps[2] != 20 {
			t.Errorf("%v: probes at %v, want 0, 10, 20", r.Name, steps)
		}
		// Bias −100: every pre-activation is below −100 + 28 (|w| ≤ 1/28,
		// pixels in [0, 1]), where ReLU' and GELU' are exactly 0 in float64.
		dead, exact := r.Curve.Metric("dead_fraction")[0], r.Curve.Metric("dead_fraction_exact")[0]
		if r.Setting.Bias == "-100" && (exact != 1 || dead != 1) {
			t.Errorf("%v: dead at start %v (exactly %v), want 1", r.Name, dead, exact)
		}
		if r.Setting.Bias == "default" && r.Setting.Act == activation.GELU && exact != 0 {
			t.Errorf("%v: %v of GELU units exactly dead at the start", r.Name, exact)
		}
		if acc := r.Values[accuracy]; !(acc >= 0 && acc <= 1) {
			t.Errorf("%v: accuracy %v", r.Name, acc)
		}
	}
	sum := extest.CheckOutput(t, dir, "dying-neurons -steps 20", "claims.csv", "dead.csv", "runs.csv", "neuron_gradient.csv", "neuron_descent.csv",
		"neuron_descent.png", "dead_lr0.1_biasdefault.png", "dead_lr0.1_bias-100.png", "slope_lr0.1_biasdefault.png")
	if v := sum.Values["neuron.relu.float32.dL_dw"]; v != 0.0 {
		t.Errorf("summary: ReLU ∂L/∂w = %v, want 0", v)
	}
	if len(sum.Claims) != 7 {
		t.Errorf("%d claims, want the 4 single-neuron claims and 3 from the sweep", len(sum.Claims))
	}
	for _, c := range sum.Claims {
		if strings.Contains(c.Claim, "non-zero for any finite z") && c.Verdict != "NOT confirmed" {
			t.Errorf("GELU' has a root at −0.7518, but the claim was %q", c.Verdict)
		}
	}
}

func TestBadFlags(t *testing.T) {
	var acts experiment.Activations
	if err := acts.Set("relu,tanh"); err == nil || !strings.Contains(err.Error(), "unknown activation") {
		t.Errorf("-acts relu,tanh: %v, want an error naming the unknown activation", err)
	}
	for _, tc := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.LRs = experiment.Floats{0.1, -1} }, "-1 is not a positive number"},
		{func(c *config) { c.Hidden = experiment.Ints{8, 0} }, "0 is not a positive width"},
		{func(c *config) { c.Biases = experiment.Strings{"minus one"} }, `"minus one"`},
	} {
		c := tiny(t.TempDir())
		tc.change(&c)
		if _, err := run(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want an error mentioning %s", err, tc.want)
		}
	}
}

func TestDeadBelow(t *testing.T) {
	// ReLU' = 0 up to 0; ELU' = e^z ≤ 1e-3 for z ≤ ln(1e-3) = −6.9078.
	if got := deadBelow(activation.ReLU, 1e-3); math.Abs(got) > 1e-9 {
		t.Errorf("ReLU: %v, want 0", got)
	}
	if got := deadBelow(activation.ELU, 1e-3); math.Abs(got-math.Log(1e-3)) > 0.0011 {
		t.Errorf("ELU: %v, want %v", got, math.Log(1e-3))
	}
	// GELU: |Φ(z) + zφ(z)| at the returned z and just above it.
	d := func(z float64) float64 {
		return math.Abs(0.5*math.Erfc(-z/math.Sqrt2) + z*math.Exp(-z*z/2)/math.Sqrt(2*math.Pi))
	}
	if z := deadBelow(activation.GELU, 1e-3); d(z) > 1e-3 || d(z+0.002) <= 1e-3 {
		t.Errorf("GELU: %v, |f'| there %v and at +0.002 %v", z, d(z), d(z+0.002))
	}
}
