package analysis

// Tests of the normal expectations against closed forms derived in the
// comments below and computed here with the standard library only, of the
// Gauss–Kronrod constants against polynomial exactness, and of the Monte
// Carlo estimators (and their standard errors) against both.

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
)

// Standard-library formulas, independent of the package's NormalCDF/PDF.
func exPhi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
func exPdf(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

// The 15-point Kronrod rule integrates polynomials of degree ≤ 22 exactly
// and its embedded 7-point Gauss rule those of degree ≤ 13; a mistyped
// constant breaks one of these.
func TestGaussKronrodConstantsArePolynomialExact(t *testing.T) {
	rule := func(k int) (kr, g float64) {
		p := func(x float64) float64 { return math.Pow(x, float64(k)) }
		kr, g = kronrodW[7]*p(0), gaussW[3]*p(0)
		for j := 0; j < 7; j++ {
			s := p(-kronrodX[j]) + p(kronrodX[j])
			kr += kronrodW[j] * s
			if j%2 == 1 {
				g += gaussW[j/2] * s
			}
		}
		return kr, g
	}
	for k := 0; k <= 24; k++ {
		want := 0.0
		if k%2 == 0 {
			want = 2 / float64(k+1) // ∫₋₁¹ xᵏ dx
		}
		kr, g := rule(k)
		if kOK := math.Abs(kr-want) < 1e-15; kOK != (k <= 22) && k%2 == 0 {
			t.Errorf("K15 on x^%d: %.17g, want %.17g (exact for degree ≤ 22 only)", k, kr, want)
		}
		if gOK := math.Abs(g-want) < 1e-15; gOK != (k <= 13) && k%2 == 0 {
			t.Errorf("G7 on x^%d: %.17g, want %.17g (exact for degree ≤ 13 only)", k, g, want)
		}
	}
}

func TestNormalExpectationClosedForms(t *testing.T) {
	sqrtPi := math.Sqrt(math.Pi)
	geluD := func(x float64) float64 { return exPhi(x) + x*exPdf(x) }
	cases := []struct {
		name   string
		f      func(float64) float64
		breaks []float64
		want   float64
	}{
		{"1", func(float64) float64 { return 1 }, nil, 1},
		{"X", func(x float64) float64 { return x }, nil, 0},
		{"X²", func(x float64) float64 { return x * x }, nil, 1},
		{"X⁴", func(x float64) float64 { return x * x * x * x }, nil, 3},
		// ReLU'(X) = 1{X > 0}: P(X > 0) = 1/2.
		{"ReLU'(X)", activation.ReLU.Deriv, activation.ReLU.Breakpoints(), 0.5},
		// E[max(0, X)] = ∫₀^∞ xφ(x) dx = φ(0) = 1/√(2π).
		{"activation.ReLU(X)", activation.ReLU.F, activation.ReLU.Breakpoints(), 1 / math.Sqrt(2*math.Pi)},
		// Φ(X) is uniform on (0, 1): E[Φ(X)] = 1/2 and E[Φ(X)²] = ∫₀¹u² du = 1/3.
		{"Φ(X)", exPhi, nil, 0.5},
		{"Φ(X)²", func(x float64) float64 { return exPhi(x) * exPhi(x) }, nil, 1.0 / 3},
		// E[φ(X)] = ∫φ² = (1/2π)∫e^{−x²} dx = (1/2π)·√π = 1/(2√π).
		{"φ(X)", exPdf, nil, 1 / (2 * sqrtPi)},
		// Xφ(X) is odd: E[Xφ(X)] = 0.
		{"Xφ(X)", func(x float64) float64 { return x * exPdf(x) }, nil, 0},
		// GELU' = Φ + xφ, so E[GELU'(X)] = E[Φ(X)] + E[Xφ(X)] = 1/2 + 0.
		{"GELU'(X)", activation.GELU.Deriv, nil, 0.5},
		// E[GELU'(X)²] = E[Φ²] + 2E[XΦφ] + E[X²φ²], with
		//   E[Φ(X)²] = 1/3 (above);
		//   E[XΦ(X)φ(X)] = (1/2π)∫xΦ(x)e^{−x²}dx; integrating by parts with
		//     xe^{−x²} = −½(e^{−x²})' gives (1/4π)∫φ(x)e^{−x²}dx
		//     = (1/4π)(1/√(2π))·√(2π/3) = 1/(4√3π);
		//   E[X²φ(X)²] = (2π)^{−3/2}∫x²e^{−3x²/2}dx = (2π)^{−3/2}·√(2π)·3^{−3/2}
		//     = 1/(6√3π).
		// Sum: 1/3 + 1/(2√3π) + 1/(6√3π) = 1/3 + 2/(3√3π) ≈ 0.4559.
		{"GELU'(X)²", func(x float64) float64 { d := geluD(x); return d * d }, nil, 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi)},
		// Stein's lemma E[Xg(X)] = E[g'(X)]: E[XΦ(X)] = E[φ(X)] = 1/(2√π).
		{"activation.GELU(X)", activation.GELU.F, nil, 1 / (2 * sqrtPi)},
		// GELU'' = (2 − x²)φ; E[φ(X)] = 1/(2√π), E[X²φ(X)] = (1/2π)∫x²e^{−x²}dx
		// = (1/2π)(√π/2) = 1/(4√π); so 2/(2√π) − 1/(4√π) = 3/(4√π).
		{"GELU''(X)", activation.GELU.Deriv2, nil, 3 / (4 * sqrtPi)},
		// f = x·g(x) with g(−x) = 1 − g(x) has f' = g + xg', g' even, so
		// E[f'(X)] = E[g(X)] + E[Xg'(X)] = 1/2 + 0.
		{"SiLU'(X)", activation.SiLU.Deriv, nil, 0.5},
		{"GELUTanh'(X)", activation.GELUTanh.Deriv, nil, 0.5},
		{"Softplus'(X)", activation.Softplus.Deriv, nil, 0.5}, // σ(X), σ(−x) = 1 − σ(x)
		// ELU' = 1{x > 0} + eˣ1{x ≤ 0}: 1/2 + E[e^X; X ≤ 0] = 1/2 + e^{1/2}Φ(−1)
		// (complete the square: eˣφ(x) = e^{1/2}φ(x − 1)).
		{"ELU'(X)", activation.ELU.Deriv, activation.ELU.Breakpoints(), 0.5 + math.Exp(0.5)*exPhi(-1)},
		// A kink away from 0: E[max(0, X + 0.3)] = 0.3Φ(0.3) + φ(0.3).
		{"activation.ReLU(X+0.3)", func(x float64) float64 { return math.Max(0, x+0.3) }, []float64{-0.3}, 0.3*exPhi(0.3) + exPdf(0.3)},
		// A jump away from 0: P(X > 1) = Φ(−1).
		{"1{X>1}", func(x float64) float64 { return b2f(x > 1) }, []float64{1}, exPhi(-1)},
	}
	for _, c := range cases {
		got, err := NormalExpectation(c.f, c.breaks...)
		if err != nil {
			t.Errorf("E[%s]: %v", c.name, err)
			continue
		}
		// The stated error must cover the actual one and be small.
		if d := math.Abs(got.Value - c.want); d > got.Err+1e-16 || got.Err > 1e-11 {
			t.Errorf("E[%s] = %v, want %.17g (actual error %.3g)", c.name, got, c.want, d)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// A jump that is not declared as a breakpoint is found by bisection: the
// result still carries an honest error estimate.
func TestNormalExpectationUndeclaredJump(t *testing.T) {
	got, err := NormalExpectation(func(x float64) float64 { return b2f(x > 0.7) })
	want := exPhi(-0.7)
	if err == nil {
		if d := math.Abs(got.Value - want); d > got.Err+1e-16 {
			t.Errorf("P(X > 0.7) = %v, want %.17g (actual error %.3g exceeds the estimate)", got, want, d)
		}
	} else if !strings.Contains(err.Error(), "analysis.NormalExpectation") {
		t.Errorf("error %q does not name the function", err)
	}
}

func TestNormalExpectationBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      func(float64) float64
		breaks []float64
		want   string
	}{
		{"nil f", nil, nil, "nil"},
		{"NaN breakpoint", func(float64) float64 { return 1 }, []float64{math.NaN()}, "breakpoint"},
		{"Inf breakpoint", func(float64) float64 { return 1 }, []float64{math.Inf(1)}, "breakpoint"},
		{"NaN f", func(x float64) float64 { return math.Log(x) }, nil, "not finite"},
		// e^{x²} overflows where φ(x) is still positive: E is infinite.
		{"divergent", func(x float64) float64 { return math.Exp(x * x) }, nil, "not finite"},
	} {
		_, err := NormalExpectation(c.f, c.breaks...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := NormalVariance(nil); err == nil {
		t.Error("NormalVariance(nil): no error")
	}
}

func TestNormalVarianceClosedForms(t *testing.T) {
	g2 := 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi) // E[GELU'(X)²], derived above
	for _, c := range []struct {
		name string
		a    func(float64) float64
		br   []float64
		want float64
	}{
		{"X", func(x float64) float64 { return x }, nil, 1},
		{"ReLU'(X)", activation.ReLU.Deriv, activation.ReLU.Breakpoints(), 0.25}, // Bernoulli(1/2)
		{"Φ(X)", exPhi, nil, 1.0 / 12},                                           // uniform on (0, 1)
		{"GELU'(X)", activation.GELU.Deriv, nil, g2 - 0.25},
		// Var[X²] = E[X⁴] − 1 = 2, around a mean far from 0 (1e4 + X²).
		{"1e4+X²", func(x float64) float64 { return 1e4 + x*x }, nil, 2},
	} {
		got, err := NormalVariance(c.a, c.br...)
		if err != nil {
			t.Errorf("Var[%s]: %v", c.name, err)
			continue
		}
		if d := math.Abs(got.Value - c.want); d > got.Err+1e-15 || got.Err > 1e-9 {
			t.Errorf("Var[%s] = %v, want %.17g (actual error %.3g)", c.name, got, c.want, d)
		}
	}
}

func TestNormalMonteCarloAgainstClosedForms(t *testing.T) {
	const n = 200000
	g2 := 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi)
	sq := func(f func(float64) float64) func(float64) float64 {
		return func(x float64) float64 { v := f(x); return v * v }
	}
	for _, c := range []struct {
		name    string
		f       func(float64) float64
		want    float64
		wantVar float64 // Var[f(X)], to check the standard error itself
	}{
		{"X²", func(x float64) float64 { return x * x }, 1, 2},
		{"ReLU'(X)", activation.ReLU.Deriv, 0.5, 0.25},
		{"Φ(X)", exPhi, 0.5, 1.0 / 12},
		{"GELU'(X)", activation.GELU.Deriv, 0.5, g2 - 0.25},
		{"GELU'(X)²", sq(activation.GELU.Deriv), g2, math.NaN()},
	} {
		got, err := NormalExpectationMC(c.f, n, rng.New(1, "mc."+c.name))
		if err != nil {
			t.Fatal(err)
		}
		if z := got.Z(c.want); math.Abs(z) > 4.5 {
			t.Errorf("MC E[%s] = %v, closed form %.6f, z = %.2f", c.name, got, c.want, z)
		}
		// The standard error is s/√n; s² must be close to the true variance.
		if wantSE := math.Sqrt(c.wantVar / n); !math.IsNaN(wantSE) && math.Abs(got.Err/wantSE-1) > 0.02 {
			t.Errorf("MC E[%s]: standard error %.4g, want √(Var/n) = %.4g", c.name, got.Err, wantSE)
		}
	}
}

// The standard error of the sample variance: for normal data
// Var[s²] = 2σ⁴/(n−1) exactly. Check the formula's value and that the
// spread of repeated estimates matches it.
func TestNormalVarianceMCStandardError(t *testing.T) {
	const n, reps = 1000, 400
	r := rng.New(7, "var-se")
	want := math.Sqrt(2.0 / (n - 1))
	var sum, sumSq, seSum float64
	for i := 0; i < reps; i++ {
		e, err := NormalVarianceMC(func(x float64) float64 { return x }, n, r)
		if err != nil {
			t.Fatal(err)
		}
		sum += e.Value
		sumSq += e.Value * e.Value
		seSum += e.Err
	}
	mean := sum / reps
	sd := math.Sqrt((sumSq - reps*mean*mean) / (reps - 1))
	if se := seSum / reps; math.Abs(se/want-1) > 0.05 {
		t.Errorf("mean reported SE of s² = %.4g, want √(2/(n−1)) = %.4g", se, want)
	}
	// sd of 400 draws is within ~3.5% (1 sd) of the truth; allow 4 sd.
	if math.Abs(sd/want-1) > 0.15 {
		t.Errorf("spread of s² over %d repetitions = %.4g, want %.4g", reps, sd, want)
	}
	if z := (mean - 1) / (want / math.Sqrt(reps)); math.Abs(z) > 4.5 {
		t.Errorf("mean of s² = %.5f, want 1 (z = %.2f)", mean, z)
	}
}

// For a fair 0/1 variable μ₄ = σ⁴ = 1/16 and s² = n/(n−1)·(1/4 − (p̂ − ½)²),
// so Var[s²] = (n/(n−1))²·Var[(p̂ − ½)²] = (n/(n−1))²·2/(16n²): the standard
// error is second order, √2/(4(n−1)). The plug-in estimate is then
// (4m₂δ² + 2m₂²/(n−1))/n with δ = p̂ − ½ and m₂ = 1/4 − δ²: random, but never
// much below the truth. (Mixing the unbiased s² into the formula instead
// gave a standard error 16 times too small at n = 20000.)
func TestNormalVarianceMCStandardErrorOfAFairCoin(t *testing.T) {
	for _, n := range []int{1000, 20000} {
		e, err := NormalVarianceMC(activation.ReLU.Deriv, n, rng.New(11, "coin"))
		if err != nil {
			t.Fatal(err)
		}
		want := math.Sqrt2 / (4 * float64(n-1))
		if r := e.Err / want; r < 0.95 || r > 10 {
			t.Errorf("n = %d: standard error of s² = %.4g, want between 0.95 and 10 times √2/(4(n−1)) = %.4g", n, e.Err, want)
		}
		if d := math.Abs(e.Value - 0.25); d > 5*want {
			t.Errorf("n = %d: s² = %.8f, more than 5 standard errors from 1/4", n, e.Value)
		}
	}
}

// The one-pass moment update agrees with a two-pass computation, also when
// the data sit far from 0.
type replay struct {
	xs []float64
	i  int
}

func (r *replay) Normal() float64 { x := r.xs[r.i]; r.i++; return x }

func TestMomentsOnePassMatchesTwoPass(t *testing.T) {
	r := rng.New(3, "moments")
	xs := make([]float64, 5000)
	for i := range xs {
		xs[i] = 1e6 + math.Exp(r.Normal()) // skewed, large offset
	}
	m, err := momentsMC("test", func(x float64) float64 { return x }, len(xs), &replay{xs: xs})
	if err != nil {
		t.Fatal(err)
	}
	// Reference: shift by 1e6 first (exact, by Sterbenz's lemma), so the
	// two-pass mean is not spoiled by rounding a sum near 5e9.
	var mean float64
	for _, x := range xs {
		mean += x - 1e6
	}
	mean /= float64(len(xs))
	var m2, m3, m4 float64
	for _, x := range xs {
		d := (x - 1e6) - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", m.mean, 1e6 + mean}, {"M2", m.m2, m2}, {"M3", m.m3, m3}, {"M4", m.m4, m4}} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: one pass %.12g, two pass %.12g", c.name, c.got, c.want)
		}
	}
}

// Quadrature and Monte Carlo agree for every activation on E[f'], E[f'²]
// and Var[f'] within a few combined standard errors.
func TestNormalQuadratureAgreesWithMonteCarlo(t *testing.T) {
	const n = 50000
	for _, a := range activation.All() {
		sq := func(x float64) float64 { d := a.Deriv(x); return d * d }
		for _, c := range []struct {
			what string
			q    func() (Estimate, error)
			mc   func() (Estimate, error)
		}{
			{"E[f']", func() (Estimate, error) { return NormalExpectation(a.Deriv, a.Breakpoints()...) },
				func() (Estimate, error) { return NormalExpectationMC(a.Deriv, n, rng.New(5, a.Name()+".d")) }},
			{"E[f'²]", func() (Estimate, error) { return NormalExpectation(sq, a.Breakpoints()...) },
				func() (Estimate, error) { return NormalExpectationMC(sq, n, rng.New(5, a.Name()+".d2")) }},
			{"Var[f']", func() (Estimate, error) { return NormalVariance(a.Deriv, a.Breakpoints()...) },
				func() (Estimate, error) { return NormalVarianceMC(a.Deriv, n, rng.New(5, a.Name()+".v")) }},
		} {
			q, err := c.q()
			if err != nil {
				t.Fatalf("%s %s quadrature: %v", a, c.what, err)
			}
			mc, err := c.mc()
			if err != nil {
				t.Fatalf("%s %s Monte Carlo: %v", a, c.what, err)
			}
			if z := ZDiff(q, mc); math.Abs(z) > 4.5 || !(mc.Err > 0) {
				t.Errorf("%s %s: quadrature %v, Monte Carlo %v, z = %.2f", a, c.what, q, mc, z)
			}
		}
	}
}

func TestNormalMonteCarloIsDeterministicAndChecksInput(t *testing.T) {
	a, _ := NormalExpectationMC(activation.GELU.F, 1000, rng.New(9, "s"))
	b, _ := NormalExpectationMC(activation.GELU.F, 1000, rng.New(9, "s"))
	c, _ := NormalExpectationMC(activation.GELU.F, 1000, rng.New(10, "s"))
	if a != b {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if a == c {
		t.Errorf("different seeds gave the same estimate %v", a)
	}
	for _, c := range []struct {
		name string
		f    func(float64) float64
		n    int
		src  NormalSource
		want string
	}{
		{"nil f", nil, 10, rng.New(1, "x"), "f is nil"},
		{"nil source", activation.GELU.F, 10, nil, "source is nil"},
		{"n too small", activation.GELU.F, 3, rng.New(1, "x"), "n = 3"},
		{"NaN", func(float64) float64 { return math.NaN() }, 10, rng.New(1, "x"), "want a finite value"},
	} {
		_, err1 := NormalExpectationMC(c.f, c.n, c.src)
		_, err2 := NormalVarianceMC(c.f, c.n, c.src)
		for _, err := range []error{err1, err2} {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
		}
	}
}

func TestEstimateZ(t *testing.T) {
	e := Estimate{Value: 1.5, Err: 0.25}
	if z := e.Z(1); z != 2 {
		t.Errorf("Z = %v, want 2", z)
	}
	if z := (Estimate{1, 0}).Z(1); z != 0 {
		t.Errorf("Z of an exact match = %v, want 0", z)
	}
	if z := ZDiff(Estimate{1, 0.3}, Estimate{0.5, 0.4}); math.Abs(z-1) > 1e-15 {
		t.Errorf("ZDiff = %v, want 0.5/0.5 = 1", z)
	}
	if s := e.String(); s != "1.5 ± 0.25" {
		t.Errorf("String = %q", s)
	}
}
