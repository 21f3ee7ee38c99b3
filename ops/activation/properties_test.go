package activation_test

// The analytic properties the source documents discuss, computed by the
// library (Minimum, Roots, MaxAbsDiff, F/Deriv/Deriv2) and checked against
// values derived independently here: closed forms, or a bisection and a grid
// search written in this file with the standard library's erf/erfc/tanh.
// The measured values are logged (go test -v -run Properties).

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
)

// stdlib-only formulas, independent of the package's implementation.
func phi(x float64) float64     { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
func Phi(x float64) float64     { return 0.5 * math.Erfc(-x/math.Sqrt2) }
func geluRef(x float64) float64 { return x * Phi(x) }
func geluTanhRef(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}
func geluSigmoidRef(x float64) float64 { return x / (1 + math.Exp(-1.702*x)) }

func TestPropertiesGELUMinimum(t *testing.T) {
	x, fx, ok, err := analysis.Minimum(activation.GELU)
	if err != nil || !ok {
		t.Fatalf("Minimum: ok=%v err=%v", ok, err)
	}
	// Independent: GELU'(x) = Φ(x) + xφ(x) = 0, by bisection on [-2, 0].
	d := func(x float64) float64 { return Phi(x) + x*phi(x) }
	lo, hi := -2.0, 0.0
	for i := 0; i < 200; i++ {
		m := (lo + hi) / 2
		if d(m) < 0 {
			lo = m
		} else {
			hi = m
		}
	}
	if math.Abs(x-lo) > 1e-12 || math.Abs(fx-geluRef(lo)) > 1e-15 {
		t.Errorf("GELU minimum at %.15f = %.15f, independent bisection gives %.15f = %.15f", x, fx, lo, geluRef(lo))
	}
	t.Logf("GELU minimum: GELU(%.6f) = %.6f", x, fx)
	for _, a := range []activation.Activation{activation.ReLU, activation.Softplus, activation.ELU} {
		if _, _, ok, _ := analysis.Minimum(a); ok {
			t.Errorf("%s is monotone but Minimum reported one", a)
		}
	}
}

func TestPropertiesAtZero(t *testing.T) {
	// GELU'(0) = Φ(0) = 1/2; GELU''(0) = 2φ(0) = √(2/π).
	if got := activation.GELU.Deriv(0); got != 0.5 {
		t.Errorf("GELU'(0) = %v, want 1/2", got)
	}
	if got, want := activation.GELU.Deriv2(0), math.Sqrt(2/math.Pi); math.Abs(got-want) > 2e-16 {
		t.Errorf("GELU''(0) = %v, want √(2/π) = %v", got, want)
	}
	// Softplus'(0) = σ(0) = 1/2, Softplus''(0) = σ(0)σ(0) = 1/4.
	if got := activation.Softplus.Deriv(0); got != 0.5 {
		t.Errorf("Softplus'(0) = %v, want 1/2", got)
	}
	if got := activation.Softplus.Deriv2(0); got != 0.25 {
		t.Errorf("Softplus''(0) = %v, want 1/4", got)
	}
	// x·σ(βx) has f''(0) = β/2, so β = √(8/π) matches GELU''(0).
	beta := math.Sqrt(8 / math.Pi)
	if got, want := activation.SigmoidGated(beta).Deriv2(0), activation.GELU.Deriv2(0); math.Abs(got-want) > 4e-16 {
		t.Errorf("sigmoid_gated(√(8/π))''(0) = %v, want GELU''(0) = %v", got, want)
	}
	// The tanh approximation has the same slope and curvature at 0.
	if got, want := activation.GELUTanh.Deriv2(0), math.Sqrt(2/math.Pi); math.Abs(got-want) > 2e-16 {
		t.Errorf("GELU_tanh''(0) = %v, want √(2/π)", got)
	}
}

func TestPropertiesInflectionPointsAndConvexity(t *testing.T) {
	// GELU''(x) = (2−x²)φ(x) vanishes at ±√2 and nowhere else.
	roots, err := analysis.Roots(activation.GELU, 2, -10, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 2 || math.Abs(roots[0]+math.Sqrt2) > 1e-15 || math.Abs(roots[1]-math.Sqrt2) > 1e-15 {
		t.Errorf("GELU inflection points %v, want ±√2", roots)
	}
	// GELU is convex between them and concave outside.
	for _, x := range []float64{-1.4, 0, 1.4} {
		if activation.GELU.Deriv2(x) <= 0 {
			t.Errorf("GELU''(%v) = %v, want > 0", x, activation.GELU.Deriv2(x))
		}
	}
	for _, x := range []float64{-3, -1.42, 1.42, 3} {
		if activation.GELU.Deriv2(x) >= 0 {
			t.Errorf("GELU''(%v) = %v, want < 0", x, activation.GELU.Deriv2(x))
		}
	}
	// Softplus'' = σ(x)σ(−x) > 0: convex everywhere, no inflection point.
	if roots, _ := analysis.Roots(activation.Softplus, 2, -30, 30); len(roots) != 0 {
		t.Errorf("Softplus inflection points %v, want none", roots)
	}
	t.Logf("inflection points: GELU %v", roots)
	for _, a := range []activation.Activation{activation.GELUTanh, activation.GELUSigmoid, activation.SiLU} {
		r, _ := analysis.Roots(a, 2, -10, 10)
		t.Logf("inflection points: %s %v", a, r)
		// Each gated unit is symmetric in its curvature: f''(−x) = f''(x).
		if len(r) != 2 || math.Abs(r[0]+r[1]) > 1e-12 {
			t.Errorf("%s inflection points %v, want a symmetric pair", a, r)
		}
	}
}

// The documents' single-neuron example: at pre-activation z = −1 the ReLU
// gradient is exactly zero and GELU's is Φ(−1) − φ(−1).
func TestPropertiesSingleNeuronSlope(t *testing.T) {
	if got := activation.ReLU.Deriv(-1); got != 0 {
		t.Errorf("ReLU'(-1) = %v, want 0", got)
	}
	want := Phi(-1) - phi(-1)
	if got := activation.GELU.Deriv(-1); math.Abs(got-want) > 1e-16 {
		t.Errorf("GELU'(-1) = %v, want Φ(-1) − φ(-1) = %v", got, want)
	}
	t.Logf("GELU'(-1) = %.6f = Φ(-1) %.6f − φ(-1) %.6f", want, Phi(-1), phi(-1))
}

// Maximum approximation errors of the tanh and sigmoid forms, measured by
// the library and by an independent grid search over [-10, 10] here.
func TestPropertiesApproximationErrors(t *testing.T) {
	for _, c := range []struct {
		approx activation.Activation
		ref    func(float64) float64
	}{{activation.GELUTanh, geluTanhRef}, {activation.GELUSigmoid, geluSigmoidRef}} {
		x, d, err := analysis.MaxAbsDiff(activation.GELU, c.approx, -10, 10)
		if err != nil {
			t.Fatal(err)
		}
		bestX, bestD := 0.0, 0.0
		for i := -1000000; i <= 1000000; i++ {
			t := float64(i) * 1e-5
			if e := math.Abs(geluRef(t) - c.ref(t)); e > bestD {
				bestX, bestD = t, e
			}
		}
		if math.Abs(math.Abs(x)-math.Abs(bestX)) > 2e-5 || math.Abs(d-bestD) > 1e-9*bestD+1e-15 {
			t.Errorf("max |GELU − %s|: library %.10g at %.6f, independent grid %.10g at %.6f", c.approx, d, x, bestD, bestX)
		}
		t.Logf("max |GELU − %s| = %.4g at x = %.4f", c.approx, d, x)
	}
}

// Intervals where a derivative vanishes identically are not roots.
func TestRootsIgnoreIdenticallyZeroIntervals(t *testing.T) {
	for _, c := range []struct {
		a     activation.Activation
		order int
		want  int
	}{
		{activation.ReLU, 2, 0}, // f'' ≡ 0
		{activation.ReLU, 1, 0}, // f' jumps from 0 to 1: no sign change
		{activation.ELU, 2, 0},  // f'' = e^x > 0 on the left, ≡ 0 on the right
		{activation.ReLU, 0, 0}, // f ≡ 0 on the left, > 0 on the right
		{activation.GELU, 0, 1}, // the single zero of x·Φ(x), at a grid point
	} {
		roots, err := analysis.Roots(c.a, c.order, -10, 10)
		if err != nil || len(roots) != c.want {
			t.Errorf("%s Roots(%d) = %v, %v; want %d roots", c.a, c.order, roots, err, c.want)
		}
	}
}
