package analysis

// Numerical analysis of an activation from its scalar reference: zeros of
// f, f', f'' (minimum, inflection points) and the largest difference between
// two activations. Used by the activations example and the property tests.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
)

// Roots returns the zeros of f^(order) (order 0, 1 or 2) in [lo, hi] at
// which it changes sign, in increasing order, each to within a few ulp. It
// scans a grid of step (hi−lo)/20000 and refines every sign change by
// bisection, so zeros closer together than the grid step, zeros where
// f^(order) touches 0 without changing sign, and intervals where it is
// identically 0 (f” of ReLU) are not reported.
func Roots(a activation.Activation, order int, lo, hi float64) ([]float64, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if order < 0 || order > 2 {
		return nil, fmt.Errorf("ops: Roots of derivative order %d, want 0, 1 or 2", order)
	}
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("ops: Roots on [%v, %v], want a finite interval with lo < hi", lo, hi)
	}
	f := a.Derivative(order)
	const steps = 20000
	grid := func(i int) float64 { return lo + (hi-lo)*float64(i)/steps }
	var roots []float64
	// last is the last grid index where f was nonzero (-1: none yet);
	// zeros counts the exact zeros seen since then.
	last, ylast, zeros := -1, 0.0, 0
	for i := 0; i <= steps; i++ {
		y := f(grid(i))
		if y == 0 {
			zeros++
			continue
		}
		if last >= 0 && (y < 0) != (ylast < 0) {
			switch zeros {
			case 0:
				roots = append(roots, bisect(f, grid(last), grid(i), ylast))
			case 1:
				roots = append(roots, grid(last+1)) // an isolated exact zero
			}
			// more zeros in a row: f vanishes on an interval, not at a root
		}
		last, ylast, zeros = i, y, 0
	}
	return roots, nil
}

// bisect narrows a sign change of f in [a, b] (f(a) = fa) down to adjacent
// floats.
func bisect(f func(float64) float64, a, b, fa float64) float64 {
	for {
		m := a + (b-a)/2
		if m <= a || m >= b {
			break
		}
		fm := f(m)
		if fm == 0 {
			return m
		}
		if (fm < 0) == (fa < 0) {
			a, fa = m, fm
		} else {
			b = m
		}
	}
	if math.Abs(f(b)) < math.Abs(fa) {
		return b
	}
	return a
}

// Minimum returns the global minimum of f and where it is attained, if f has
// one: a zero of f' where f' changes from negative to positive and f is
// lowest. Monotone activations (ReLU, Softplus, ELU) approach their infimum
// only as x → −∞; for them ok is false.
func Minimum(a activation.Activation) (x, fx float64, ok bool, err error) {
	roots, err := Roots(a, 1, -20, 20)
	if err != nil {
		return 0, 0, false, err
	}
	fx = math.Inf(1)
	for _, r := range roots {
		const h = 1e-6
		if a.Deriv(r-h) < 0 && a.Deriv(r+h) > 0 && a.F(r) < fx {
			x, fx, ok = r, a.F(r), true
		}
	}
	return x, fx, ok, nil
}

// MaxAbsDiff returns the largest |a(x) − b(x)| over [lo, hi] and where it
// occurs: a grid search with step (hi−lo)/200000 refined by golden-section
// search around the best grid point.
func MaxAbsDiff(a, b activation.Activation, lo, hi float64) (x, diff float64, err error) {
	if err := a.Validate(); err != nil {
		return 0, 0, err
	}
	if err := b.Validate(); err != nil {
		return 0, 0, err
	}
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0, fmt.Errorf("ops: MaxAbsDiff on [%v, %v], want a finite interval with lo < hi", lo, hi)
	}
	d := func(t float64) float64 { return math.Abs(a.F(t) - b.F(t)) }
	const steps = 200000
	h := (hi - lo) / steps
	best := lo
	for i := 0; i <= steps; i++ {
		if t := lo + h*float64(i); d(t) > d(best) {
			best = t
		}
	}
	l, r := math.Max(lo, best-h), math.Min(hi, best+h)
	const inv = 0.6180339887498949 // (√5−1)/2
	for r-l > 1e-15*math.Max(1, math.Abs(best)) {
		m1, m2 := r-inv*(r-l), l+inv*(r-l)
		if d(m1) < d(m2) {
			l = m1
		} else {
			r = m2
		}
	}
	x = (l + r) / 2
	if d(best) > d(x) {
		x = best
	}
	return x, d(x), nil
}
