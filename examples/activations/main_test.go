package main

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/examples/internal/extest"
)

func small(dir string) config {
	return config{Out: dir, Seed: 1, MC: 20000, Trials: 20, DPI: 40, Args: []string{"activations", "-mc", "20000"}}
}

func TestRunAgreesAndWritesTheReport(t *testing.T) {
	dir := t.TempDir()
	res, err := run(small(dir))
	if err != nil {
		t.Fatal(err)
	}
	// Quadrature and Monte Carlo agree within their stated errors.
	if len(res.Quantities) != 24 {
		t.Fatalf("%d quantities, want 8 activations × 3", len(res.Quantities))
	}
	for _, q := range res.Quantities {
		z := (q.Quad.Value - q.MC.Value) / math.Hypot(q.Quad.Err, q.MC.Err)
		if math.Abs(z) > 4.5 || !(q.MC.Err > 0) || q.Quad.Err > 1e-10 {
			t.Errorf("%s %s: quadrature %v, Monte Carlo %v, z = %.2f", q.Act, q.What, q.Quad, q.MC, z)
		}
	}
	// The ReLU-noise identity holds within Monte Carlo error.
	if len(res.Noise) != 15 {
		t.Fatalf("%d noise rows, want 15", len(res.Noise))
	}
	for _, q := range res.Noise {
		if z := (q.MC.Value - q.Quad.Value) / q.MC.Err; math.Abs(z) > 4.5 {
			t.Errorf("E[ReLU(x+ε)] at %s: closed form %.6f, Monte Carlo %v, z = %.2f", q.What, q.Quad.Value, q.MC, z)
		}
	}
	sum := extest.CheckOutput(t, dir, "activations -mc 20000", "claims.csv", "properties.csv", "tails.csv", "approximations.csv",
		"expectations.csv", "relu_noise.csv", "f.png", "d1.png", "d2.png", "approx_error.png")
	num := func(k string) float64 {
		v, ok := sum.Number(k)
		if !ok {
			t.Errorf("summary.json: %s = %v, want a number", k, sum.Values[k])
		}
		return v
	}
	// A few values against closed forms derived independently (see
	// ops/expectation_test.go): E[GELU'(X)²] = 1/3 + 2/(3√3π), Var[ReLU'(X)] = 1/4,
	// E[GELU(X)] = 1/(2√π), GELU''(0) = √(2/π).
	for k, want := range map[string]float64{
		"gelu.E_d1sq.quad": 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi), "relu.Var_d1.quad": 0.25, "gelu.E_f": 1 / (2 * math.Sqrt(math.Pi)),
		"gelu.d2_0": math.Sqrt(2 / math.Pi), "claims.gelu_at_m1": -0.5 * math.Erfc(1/math.Sqrt2),
	} {
		if got := num(k); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.15g, want %.15g", k, got, want)
		}
	}
	// The tails table relies on x − f(x) = −f(−x) for the gated units.
	for _, a := range []string{"gelu", "gelu_tanh", "silu", "softplus", "sigmoid_gated"} {
		if gap, left := num(a+".tail.gap_p5"), num(a+".tail.f_m5"); math.Abs(gap+left) > 1e-12 {
			t.Errorf("%s: 5 − f(5) = %g but −f(−5) = %g", a, gap, -left)
		}
	}
	for _, k := range []string{"gelu.min_x", "approx.gelu_tanh.max_abs_diff", "approx.gelu_tanh.sample1000.median", "relu_noise.max_abs_z",
		"sigmoid_gated.Var_d1.z", "claims.tanh_share_above_2e-4"} {
		num(k)
	}
	if _, ok := sum.Values["relu.min_x"]; ok {
		t.Error("relu has no minimum, but relu.min_x is set")
	}
}

func TestRunIsDeterministic(t *testing.T) {
	extest.RunTwice(t, func(dir string, _ bool) (*results, error) { return run(small(dir)) })
}

func TestRunRejectsBadConfig(t *testing.T) {
	c := small(t.TempDir())
	c.MC = 2
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-mc 2") {
		t.Errorf("mc = 2: error %v", err)
	}
}
