package analysis

// An activation's profile: the shape facts and unit-Gaussian expectations
// that papers and posts quote about activations (where the minimum is, the
// curvature at 0, where f is convex, E[f'(X)²], ...), computed in one call
// from the float64 references so that programs only tabulate them.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/ops/activation"
)

// ProfileLo and ProfileHi bound the interval searched for inflection
// points; beyond it every built-in activation is linear or constant to
// well below float64 resolution in f”. For a user-defined activation
// (activation.New) that bends further out, Roots(a, 2, lo, hi) finds them.
const (
	ProfileLo = -10.0
	ProfileHi = 10.0
)

// Profile is an activation's shape and the moments of f and f' under a
// unit-Gaussian input. See Activation.Profile.
type Profile struct {
	Activation activation.Activation
	// HasMin reports a global minimum MinF at MinX (see Minimum); false for
	// the monotone activations, whose MinX and MinF are then 0.
	HasMin     bool
	MinX, MinF float64
	// D1At0 and D2At0 are f'(0) and f”(0).
	D1At0, D2At0 float64
	// Inflections are the zeros of f” in [ProfileLo, ProfileHi] where f”
	// changes sign, in increasing order; kinks (ReLU, ELU at 0) and
	// stretches where f” ≡ 0 are not inflection points.
	Inflections []float64
	// Convex is where f” > 0 on the whole line.
	Convex Intervals
	// Mean is E[f(X)] and Deriv holds E[f'(X)], E[f'(X)²] and Var[f'(X)],
	// X ~ N(0, 1), by adaptive quadrature with error estimates.
	Mean  Estimate
	Deriv DerivMoments
}

// DerivMoments are E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1).
// E[f'(X)²] is the second moment, not the variance:
// Var = MeanSq − Mean², computed here without that cancellation.
type DerivMoments struct {
	Mean, MeanSq, Var Estimate
}

// Interval is the open interval (Lo, Hi); Lo may be −Inf and Hi +Inf.
type Interval struct{ Lo, Hi float64 }

// Intervals is a union of disjoint open intervals in increasing order.
type Intervals []Interval

// Format writes the union as "(-1.414, 1.414)", "(-Inf, 0)",
// "(-2.4, -1) ∪ (1, +Inf)", "everywhere" for the whole line and
// "nowhere" when empty, with each finite end written by num (nil: the
// shortest decimal that reads back as the same float64).
func (s Intervals) Format(num func(float64) string) string {
	if num == nil {
		num = func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	}
	end := func(v float64) string {
		switch {
		case math.IsInf(v, -1):
			return "-Inf"
		case math.IsInf(v, 1):
			return "+Inf"
		}
		return num(v)
	}
	switch {
	case len(s) == 0:
		return "nowhere"
	case len(s) == 1 && math.IsInf(s[0].Lo, -1) && math.IsInf(s[0].Hi, 1):
		return "everywhere"
	}
	parts := make([]string, len(s))
	for i, iv := range s {
		parts[i] = "(" + end(iv.Lo) + ", " + end(iv.Hi) + ")"
	}
	return strings.Join(parts, " ∪ ")
}

// String is Format(nil).
func (s Intervals) String() string { return s.Format(nil) }

// Profile computes a's profile: its minimum, f'(0), f”(0), inflection
// points and convexity from the scalar references (Minimum, Roots), and
// E[f(X)], E[f'(X)], E[f'(X)²], Var[f'(X)] for X ~ N(0, 1) by
// NormalExpectation and NormalVariance, split at a's Breakpoints. It takes
// a few milliseconds.
func ProfileOf(a activation.Activation) (Profile, error) {
	p := Profile{Activation: a}
	if err := a.Validate(); err != nil {
		return p, err
	}
	var err error
	if p.MinX, p.MinF, p.HasMin, err = Minimum(a); err != nil {
		return p, err
	}
	if !p.HasMin {
		p.MinX, p.MinF = 0, 0
	}
	p.D1At0, p.D2At0 = a.Deriv(0), a.Deriv2(0)
	roots, err := Roots(a, 2, ProfileLo, ProfileHi)
	if err != nil {
		return p, err
	}
	const h = 1e-6 // Roots are exact to a few ulp; f” changes sign across them
	for _, x := range roots {
		if a.Deriv2(x-h)*a.Deriv2(x+h) < 0 {
			p.Inflections = append(p.Inflections, x)
		}
	}
	p.Convex = positive2(a, p.Inflections)
	if p.Mean, err = NormalExpectation(a.F, a.Breakpoints()...); err != nil {
		return p, fmt.Errorf("ops: %s: E[f(X)]: %w", a, err)
	}
	p.Deriv, err = derivMoments(a)
	return p, err
}

// positive2 returns where f” > 0, given the inflection points: between
// consecutive inflection points and kinks f” keeps its sign, so one
// evaluation per piece decides it.
func positive2(a activation.Activation, infl []float64) Intervals {
	cuts := append(append([]float64{math.Inf(-1)}, infl...), a.Breakpoints()...)
	slices.Sort(cuts)
	cuts = append(slices.Compact(cuts), math.Inf(1))
	var out Intervals
	open := math.NaN() // left end of the stretch with f” > 0 being built
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		mid := (lo + hi) / 2
		switch {
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			mid = 0
		case math.IsInf(lo, -1):
			mid = hi - 1
		case math.IsInf(hi, 1):
			mid = lo + 1
		}
		if pos := a.Deriv2(mid) > 0; pos && math.IsNaN(open) {
			open = lo
		} else if !pos && !math.IsNaN(open) {
			out, open = append(out, Interval{open, lo}), math.NaN()
		}
	}
	if !math.IsNaN(open) {
		out = append(out, Interval{open, math.Inf(1)})
	}
	return out
}

// derivMoments computes DerivMoments by quadrature.
func derivMoments(a activation.Activation) (DerivMoments, error) {
	var d DerivMoments
	var err error
	bp := a.Breakpoints()
	if d.Mean, err = NormalExpectation(a.Deriv, bp...); err != nil {
		return d, fmt.Errorf("ops: %s: E[f'(X)]: %w", a, err)
	}
	if d.MeanSq, err = NormalExpectation(derivSq(a), bp...); err != nil {
		return d, fmt.Errorf("ops: %s: E[f'(X)²]: %w", a, err)
	}
	if d.Var, err = NormalVariance(a.Deriv, bp...); err != nil {
		return d, fmt.Errorf("ops: %s: Var[f'(X)]: %w", a, err)
	}
	return d, nil
}

// derivSq is f'(x)².
func derivSq(a activation.Activation) func(float64) float64 {
	return func(x float64) float64 { d := a.Deriv(x); return d * d }
}

// DerivMomentsMC estimates E[f'(X)], E[f'(X)²] and Var[f'(X)] for
// X ~ N(0, 1) by Monte Carlo (NormalExpectationMC, NormalVarianceMC), each
// from its own n consecutive samples of src (3n in all), so that the three
// estimates are independent of each other and the Err of each is its own
// standard error.
func DerivMomentsMC(a activation.Activation, n int, src NormalSource) (DerivMoments, error) {
	var d DerivMoments
	if err := a.Validate(); err != nil {
		return d, err
	}
	var err error
	if d.Mean, err = NormalExpectationMC(a.Deriv, n, src); err != nil {
		return d, fmt.Errorf("ops: %s: E[f'(X)]: %w", a, err)
	}
	if d.MeanSq, err = NormalExpectationMC(derivSq(a), n, src); err != nil {
		return d, fmt.Errorf("ops: %s: E[f'(X)²]: %w", a, err)
	}
	if d.Var, err = NormalVarianceMC(a.Deriv, n, src); err != nil {
		return d, fmt.Errorf("ops: %s: Var[f'(X)]: %w", a, err)
	}
	return d, nil
}
