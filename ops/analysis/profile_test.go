package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

// solve finds the zero of f in [lo, hi] (f(lo), f(hi) of opposite signs)
// by plain bisection, independently of Roots.
func solve(f func(float64) float64, lo, hi float64) float64 {
	for i := 0; i < 200; i++ {
		m := (lo + hi) / 2
		if (f(m) < 0) == (f(lo) < 0) {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

func TestProfileAgainstClosedForms(t *testing.T) {
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	Phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	// GELU' = Φ(x) + xφ(x) vanishes at its minimum; f” = φ(x)(2 − x²).
	gMin := solve(func(x float64) float64 { return Phi(x) + x*phi(x) }, -2, 0)
	// SiLU” = σ'(x)·(2 + x(1 − 2σ(x))) = σ'(x)·(2 − x·tanh(x/2)).
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// SiLU' = σ(x)(1 + x(1 − σ(x))).
	sMin := solve(func(x float64) float64 { return 1 + x*(1-sig(x)) }, -3, -0.5)
	sInfl := solve(func(x float64) float64 { return 2 - x*math.Tanh(x/2) }, 1, 4)
	g2 := 1.0/3 + 2/(3*math.Sqrt(3)*math.Pi) // E[GELU'(X)²], derived in expectation_test.go
	inf := math.Inf(1)
	for _, c := range []struct {
		a                  activation.Activation
		hasMin             bool
		minX, minF         float64
		d1, d2             float64
		infl               []float64
		convex             Intervals
		mean, e1, e2, var1 float64
	}{
		{activation.GELU, true, gMin, gMin * Phi(gMin), 0.5, math.Sqrt(2 / math.Pi), []float64{-math.Sqrt2, math.Sqrt2},
			Intervals{{-math.Sqrt2, math.Sqrt2}}, 1 / (2 * math.Sqrt(math.Pi)), 0.5, g2, g2 - 0.25},
		// ReLU' is a fair coin under N(0, 1); E[activation.ReLU(X)] = φ(0). f” ≡ 0 away from the kink.
		{activation.ReLU, false, 0, 0, 0, 0, nil, nil, 1 / math.Sqrt(2*math.Pi), 0.5, 0.5, 0.25},
		// Softplus” = σ(1 − σ) > 0 everywhere.
		{activation.Softplus, false, 0, 0, 0.5, 0.25, nil, Intervals{{-inf, inf}}, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
		{activation.SiLU, true, sMin, sMin * sig(sMin), 0.5, 0.5, []float64{-sInfl, sInfl}, Intervals{{-sInfl, sInfl}},
			math.NaN(), math.NaN(), math.NaN(), math.NaN()},
		// ELU” = eˣ for x ≤ 0 (so 1 at 0, as f' = eˣ gives 1), 0 on the right.
		{activation.ELU, false, 0, 0, 1, 1, nil, Intervals{{-inf, 0}}, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
	} {
		p, err := ProfileOf(c.a)
		if err != nil {
			t.Fatalf("%s: %v", c.a, err)
		}
		close := func(what string, got, want, tol float64) {
			t.Helper()
			if !math.IsNaN(want) && !(math.Abs(got-want) <= tol) {
				t.Errorf("%s %s = %.17g, want %.17g", c.a, what, got, want)
			}
		}
		if p.HasMin != c.hasMin || p.Activation != c.a {
			t.Errorf("%s: HasMin %v, want %v", c.a, p.HasMin, c.hasMin)
		}
		close("MinX", p.MinX, c.minX, 1e-9)
		close("MinF", p.MinF, c.minF, 1e-14)
		close("f'(0)", p.D1At0, c.d1, 1e-15)
		close("f''(0)", p.D2At0, c.d2, 1e-15)
		if len(p.Inflections) != len(c.infl) {
			t.Errorf("%s: inflection points %v, want %v", c.a, p.Inflections, c.infl)
		}
		for i := range c.infl {
			close("inflection", p.Inflections[i], c.infl[i], 1e-12)
		}
		if len(p.Convex) != len(c.convex) {
			t.Errorf("%s: convex on %v, want %v", c.a, p.Convex, c.convex)
		}
		for i := range c.convex {
			if p.Convex[i].Lo != c.convex[i].Lo && math.Abs(p.Convex[i].Lo-c.convex[i].Lo) > 1e-12 ||
				p.Convex[i].Hi != c.convex[i].Hi && math.Abs(p.Convex[i].Hi-c.convex[i].Hi) > 1e-12 {
				t.Errorf("%s: convex on %v, want %v", c.a, p.Convex, c.convex)
			}
		}
		close("E[f(X)]", p.Mean.Value, c.mean, 1e-12)
		close("E[f'(X)]", p.Deriv.Mean.Value, c.e1, 1e-12)
		close("E[f'(X)²]", p.Deriv.MeanSq.Value, c.e2, 1e-12)
		close("Var[f'(X)]", p.Deriv.Var.Value, c.var1, 1e-12)
		for _, e := range []Estimate{p.Mean, p.Deriv.Mean, p.Deriv.MeanSq, p.Deriv.Var} {
			if !(e.Err >= 0 && e.Err < 1e-10) {
				t.Errorf("%s: error estimate %v", c.a, e)
			}
		}
	}
	if _, err := ProfileOf(activation.Activation{}); err == nil {
		t.Error("the zero activation.Activation has a profile")
	}
}

func TestIntervalsFormat(t *testing.T) {
	inf := math.Inf(1)
	three := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	for _, c := range []struct {
		s    Intervals
		num  func(float64) string
		want string
	}{
		{nil, nil, "nowhere"},
		{Intervals{{-inf, inf}}, nil, "everywhere"},
		{Intervals{{-math.Sqrt2, math.Sqrt2}}, three, "(-1.414, 1.414)"},
		{Intervals{{-inf, 0}}, nil, "(-Inf, 0)"},
		{Intervals{{-2.5, -1}, {1, inf}}, nil, "(-2.5, -1) ∪ (1, +Inf)"},
	} {
		if got := c.s.Format(c.num); got != c.want {
			t.Errorf("%v: %q, want %q", []Interval(c.s), got, c.want)
		}
	}
	if got := (Intervals{{0, 1}}).String(); got != "(0, 1)" {
		t.Errorf("String: %q", got)
	}
}

// listSource replays fixed samples.
type listSource struct {
	xs []float64
	i  int
}

func (s *listSource) Normal() float64 { s.i++; return s.xs[s.i-1] }

func TestDerivMomentsMCUsesThreeBlocksOfSamples(t *testing.T) {
	// ReLU' is 1 for x > 0: the first 4 samples give the mean, the next 4
	// the mean of the square, the last 4 the variance.
	src := &listSource{xs: []float64{1, 1, 1, -1, 1, -1, -1, -1, 1, 1, -1, -1}}
	d, err := DerivMomentsMC(activation.ReLU, 4, src)
	if err != nil {
		t.Fatal(err)
	}
	// Means 3/4 and 1/4; the standard error s/√n with s² = Σ(y − ȳ)²/(n−1).
	se := math.Sqrt(3.0/16*4/3) / 2
	// Var: s² = 1/3 of the 0/1 sample (1, 1, 0, 0).
	if d.Mean.Value != 0.75 || math.Abs(d.Mean.Err-se) > 1e-15 || d.MeanSq.Value != 0.25 || math.Abs(d.MeanSq.Err-se) > 1e-15 ||
		math.Abs(d.Var.Value-1.0/3) > 1e-15 || src.i != 12 {
		t.Errorf("got %+v after %d samples", d, src.i)
	}
	if _, err := DerivMomentsMC(activation.ReLU, 2, src); err == nil {
		t.Error("n = 2: no error")
	}
}

func TestDerivMomentsMCAgreesWithQuadrature(t *testing.T) {
	src := &lcgNormal{state: 7}
	for _, a := range []activation.Activation{activation.GELU, activation.ReLU, activation.SiLU} {
		p, err := ProfileOf(a)
		if err != nil {
			t.Fatal(err)
		}
		mc, err := DerivMomentsMC(a, 20000, src)
		if err != nil {
			t.Fatal(err)
		}
		for i, pair := range [][2]Estimate{{p.Deriv.Mean, mc.Mean}, {p.Deriv.MeanSq, mc.MeanSq}, {p.Deriv.Var, mc.Var}} {
			if z := ZDiff(pair[0], pair[1]); math.Abs(z) > 4.5 || !(pair[1].Err > 0) {
				t.Errorf("%s moment %d: quadrature %v, Monte Carlo %v (z = %.2f)", a, i, pair[0], pair[1], z)
			}
		}
	}
}

// lcgNormal is a small deterministic normal source (Box–Muller on a
// 64-bit LCG), so that this test does not depend on graph/rng.
type lcgNormal struct {
	state uint64
	spare float64
	has   bool
}

func (s *lcgNormal) uniform() float64 {
	s.state = s.state*6364136223846793005 + 1442695040888963407
	return (float64(s.state>>11) + 0.5) / (1 << 53)
}

func (s *lcgNormal) Normal() float64 {
	if s.has {
		s.has = false
		return s.spare
	}
	r, th := math.Sqrt(-2*math.Log(s.uniform())), 2*math.Pi*s.uniform()
	s.spare, s.has = r*math.Sin(th), true
	return r * math.Cos(th)
}

func ExampleProfileOf() {
	p, err := ProfileOf(activation.GELU)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("minimum %.4f at x = %.4f, f''(0) = %.4f\n", p.MinF, p.MinX, p.D2At0)
	fmt.Printf("inflection points %.4f, convex on %s\n", p.Inflections, p.Convex.Format(func(v float64) string { return fmt.Sprintf("%.4f", v) }))
	fmt.Printf("E[f'(X)²] = %.4f, Var[f'(X)] = %.4f for X ~ N(0, 1)\n", p.Deriv.MeanSq.Value, p.Deriv.Var.Value)
	// Output:
	// minimum -0.1700 at x = -0.7518, f''(0) = 0.7979
	// inflection points [-1.4142 1.4142], convex on (-1.4142, 1.4142)
	// E[f'(X)²] = 0.4559, Var[f'(X)] = 0.2059 for X ~ N(0, 1)
}
