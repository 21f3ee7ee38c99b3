package activation_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/internal/optest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// testInputs spans both tails, the region around the GELU minimum and
// inflection points, and stays away from the kinks of ReLU and ELU at 0.
var testInputs = []float64{-30, -9.5, -4.25, -2.1, -1.4142, -0.75, -0.31, 0.05, 0.4, 1.3, 2.7, 6, 25}

func tensorOf(dt tensor.Dtype, xs []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(xs))
		for i, x := range xs {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(append([]float64(nil), xs...)))
}

// round rounds a float64 reference to the dtype's precision.
func round(dt tensor.Dtype, x float64) float64 {
	if dt == tensor.Float32 {
		return float64(float32(x))
	}
	return x
}

// On the tape machine, the forward value of Apply and the gradient from
// graph.Grad are the scalar reference rounded once to the dtype.
func TestApplyForwardAndGradientOnTapeMachine(t *testing.T) {
	for _, act := range withOwn(t) {
		for _, dt := range optest.Dtypes() {
			t.Run(fmt.Sprintf("%s/%v", act, dt), func(t *testing.T) {
				g, _ := graph.New(dt, 1)
				x, _ := g.Input("x", len(testInputs))
				y, err := act.Apply(x)
				if err != nil {
					t.Fatal(err)
				}
				loss, _ := G.Sum(y)
				m, err := g.Compile(loss, graph.WithRespectTo(x), graph.Keep(y))
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Set(x, tensorOf(dt, testInputs)); err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 2; run++ { // a second run must give the same (no accumulation)
					if err := m.Run(); err != nil {
						t.Fatal(err)
					}
					yv, _ := m.Value(y)
					gv, _ := m.Grad(x)
					for i, xi := range testInputs {
						xi = round(dt, xi)
						if got, want := optest.Floats(t, yv)[i], round(dt, act.F(xi)); got != want {
							t.Errorf("run %d: f(%v) = %v, want %v", run, xi, got, want)
						}
						if got, want := optest.Floats(t, gv)[i], round(dt, act.Deriv(xi)); got != want {
							t.Errorf("run %d: f'(%v) = %v, want %v", run, xi, got, want)
						}
					}
				}
			})
		}
	}
}

// lispGrads runs Σ f(x) (v nil) or Σ v·f'(x) (the backward op) on the
// LispMachine and returns the gradients with respect to x and v. (The
// symbolic gradient of G.Sum is avoided here: gorgonia's own
// repeatOp.DoDiff panics on float32 scalars.)
func lispGrads(t *testing.T, act activation.Activation, dt tensor.Dtype, v []float64) (dx, dv []float64) {
	t.Helper()
	eg := G.NewGraph()
	x := G.NewVector(eg, dt, G.WithShape(len(testInputs)), G.WithName("x"), G.WithValue(tensorOf(dt, testInputs)))
	var vn, y *G.Node
	var err error
	if v == nil {
		y, err = act.Apply(x)
	} else {
		vn = G.NewVector(eg, dt, G.WithShape(len(v)), G.WithName("v"), G.WithValue(tensorOf(dt, v)))
		y, err = act.ApplyGrad(x, vn)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := G.Sum(y); err != nil {
		t.Fatal(err)
	}
	m := G.NewLispMachine(eg)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("%s %v: %v", act, dt, err)
	}
	grad := func(n *G.Node) []float64 {
		d, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		return append([]float64(nil), optest.Floats(t, d)...) // a copy: m.Close may reuse the memory
	}
	dx = grad(x)
	if vn != nil {
		dv = grad(vn)
	}
	return dx, dv
}

// On the LispMachine, DoDiff of the backward op y = v·f'(x) gives
// ∂Σy/∂x = v·f”(x) and ∂Σy/∂v = f'(x).
func TestBackwardOpDoDiffOnLispMachine(t *testing.T) {
	v := []float64{0.5, -1, 2, 0.25, -0.75, 1.5, -2, 1, 0.1, -0.3, 0.7, 1.1, -1.2}
	for _, act := range withOwn(t) {
		for _, dt := range optest.Dtypes() {
			dx, dv := lispGrads(t, act, dt, v)
			for i, xi := range testInputs {
				xi, vi := round(dt, xi), round(dt, v[i])
				if got, want := dx[i], round(dt, vi*act.Deriv2(xi)); got != want {
					t.Errorf("%s %v: d/dx v·f'(x) at %v = %v, want %v", act, dt, xi, got, want)
				}
				if got, want := dv[i], round(dt, act.Deriv(xi)); got != want {
					t.Errorf("%s %v: d/dv v·f'(x) at %v = %v, want %v", act, dt, xi, got, want)
				}
			}
		}
	}
}

// The LispMachine also differentiates the forward op: ∂Σf(x)/∂x = f'(x).
func TestDoDiffForwardOnLispMachine(t *testing.T) {
	for _, act := range withOwn(t) {
		for _, dt := range optest.Dtypes() {
			d, _ := lispGrads(t, act, dt, nil)
			for i, xi := range testInputs {
				xi = round(dt, xi)
				if got, want := d[i], round(dt, act.Deriv(xi)); got != want {
					t.Errorf("%s %v: f'(%v) = %v, want %v", act, dt, xi, got, want)
				}
			}
		}
	}
}

// Backward and double backward of every activation against central
// differences (graph.CheckGrad, graph.CheckGradGrad), in float64, on a
// 2×7 input inside a small composite function so that the op's gradient
// input is not all ones.
func TestGradCheckEveryActivation(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 7), tensor.WithBacking([]float64{
		-6.2, -3.1, -1.7, -0.76, -0.2, 0.3, 0.9,
		1.41, 2.2, 3.8, -2.6, 4.4, -0.45, 0.62}))
	for _, act := range withOwn(t) {
		build := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			sq, err := G.Square(in[0]) // f(x²·0.4 − 1) exercises the chain rule
			if err != nil {
				return nil, err
			}
			sc, err := G.Mul(sq, G.NewConstant(0.4))
			if err != nil {
				return nil, err
			}
			sh, err := G.Sub(sc, G.NewConstant(1.0))
			if err != nil {
				return nil, err
			}
			return act.Apply(sh)
		}
		for _, second := range []bool{false, true} {
			check, name := graph.CheckGrad, "CheckGrad"
			if second {
				check, name = graph.CheckGradGrad, "CheckGradGrad"
			}
			res, err := check(build, []*tensor.Dense{x}, graph.GradCheck{Seed: 3, RTol: 1e-6, ATol: 1e-8})
			if err != nil {
				t.Fatalf("%s %s: %v", act, name, err)
			}
			if !res.OK {
				t.Errorf("%s %s: %v", act, name, res)
			}
		}
	}
}

func TestThirdDerivativeIsAnError(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	y, _ := activation.GELU.Apply(x)
	l, _ := G.Sum(y)
	g1, _ := g.Grad(l, x)
	s1, _ := G.Sum(g1[0])
	g2, err := g.Grad(s1, x)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := G.Sum(g2[0])
	_, err = g.Grad(s2, x)
	if err == nil || !strings.Contains(err.Error(), "third derivative") {
		t.Errorf("third derivative: got error %v, want one saying it is not implemented", err)
	}
}

func TestApplyRejectsBadInput(t *testing.T) {
	eg := G.NewGraph()
	ints := G.NewVector(eg, tensor.Int, G.WithShape(3), G.WithName("ints"))
	scalar := G.NewScalar(eg, tensor.Float64, G.WithName("s"))
	vec := G.NewVector(eg, tensor.Float64, G.WithShape(3), G.WithName("v"))
	cases := []struct {
		act  activation.Activation
		in   *G.Node
		want string
	}{
		{activation.GELU, ints, "dtype int"},
		{activation.GELU, scalar, "scalar"},
		{activation.GELU, nil, "nil"},
		{activation.Activation{}, vec, "zero Activation"},
		{activation.SigmoidGated(-1), vec, "β > 0"},
		{activation.SigmoidGated(math.NaN()), vec, "β > 0"},
		{activation.ELUAlpha(math.Inf(1)), vec, "α > 0"},
	}
	for _, c := range cases {
		n, err := c.act.Apply(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || n != nil {
			t.Errorf("%v.Apply(%v): got (%v, %v), want an error containing %q", c.act, c.in, n, err, c.want)
		}
	}
}

func TestKernelsRejectMismatchedLengths(t *testing.T) {
	err := activation.Backward(activation.GELU, make([]float32, 3), make([]float32, 3), make([]float32, 2))
	if err == nil || !strings.Contains(err.Error(), "g 2") {
		t.Errorf("got %v, want a length error naming g 2", err)
	}
	if err := activation.Forward(activation.Activation{}, make([]float64, 1), make([]float64, 1)); err == nil {
		t.Error("zero Activation accepted by Forward")
	}
}

// WriteHash must tell activations and parameters apart, or gorgonia merges
// e.g. exact and tanh GELU of the same input into one node.
func TestDistinctActivationsAreDistinctNodes(t *testing.T) {
	eg := G.NewGraph()
	x := G.NewVector(eg, tensor.Float64, G.WithShape(3), G.WithName("x"))
	seen := map[*G.Node]string{}
	// Two definitions under one name are two activations.
	other, err := newMish("mish")
	if err != nil {
		t.Fatal(err)
	}
	for _, act := range append(withOwn(t), activation.SigmoidGated(2), activation.ELUAlpha(0.5), other) {
		n, err := act.Apply(x)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[n]; dup {
			t.Errorf("%s and %s produced the same node", prev, act)
		}
		seen[n] = act.Name()
		again, _ := act.Apply(x)
		if again != n {
			t.Errorf("%s applied twice to x gave two nodes; gorgonia should share it", act)
		}
	}
}

func TestParseActivationRoundTrip(t *testing.T) {
	for _, act := range append(activation.All(), activation.ELUAlpha(0.25)) {
		got, err := activation.ParseActivation(act.Name())
		if err != nil || got != act {
			t.Errorf("ParseActivation(%q) = %v, %v; want %v", act.Name(), got, err, act)
		}
	}
	for _, bad := range []string{"", "tanh", "relu:2", "elu:x", "sigmoid_gated:-1"} {
		if _, err := activation.ParseActivation(bad); err == nil {
			t.Errorf("ParseActivation(%q) accepted", bad)
		}
	}
	if a, _ := activation.ParseActivation("Swish"); a != activation.SiLU {
		t.Errorf("swish should parse as silu, got %v", a)
	}
}

func TestTitleKeyAndParseActivations(t *testing.T) {
	want := map[string]string{"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU (tanh)", "gelu_sigmoid": "GELU (sigmoid)",
		"softplus": "Softplus", "silu": "SiLU", "elu": "ELU", "elu:0.5": "ELU (α=0.5)",
		"sigmoid_gated": "x·σ(βx), β=√(8/π)", "sigmoid_gated:1.5": "x·σ(βx), β=1.5"}
	for name, title := range want {
		a, err := activation.ParseActivation(name)
		if err != nil || a.Title() != title {
			t.Errorf("%s: Title %q (%v), want %q", name, a.Title(), err, title)
		}
		if k, _, _ := strings.Cut(name, ":"); a.Key() != k {
			t.Errorf("%s: Key %q, want %q", name, a.Key(), k)
		}
	}
	as, err := activation.ParseActivations("relu, gelu,gelu_tanh")
	if err != nil || len(as) != 3 || as[1] != activation.GELU {
		t.Errorf("ParseActivations: %v, %v", as, err)
	}
	for _, bad := range []string{"", "relu,", "relu,relu", "relu,tanh"} {
		if _, err := activation.ParseActivations(bad); err == nil {
			t.Errorf("ParseActivations(%q) accepted", bad)
		}
	}
}
