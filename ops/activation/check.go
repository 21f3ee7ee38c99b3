package activation

// The derivative check New runs on a user's activation: f' against finite
// differences of f and f” against finite differences of f', on a grid over
// the tails and both sides of every breakpoint, so that a wrong derivative
// is an error at construction instead of a model that trains badly.
//
// Each finite difference is Ridders' extrapolation (Numerical Recipes
// §5.7): central differences at steps h, h/1.4, h/1.4², ... combined in a
// Neville tableau, which extrapolates to h → 0 and estimates its own
// error, without a step tuned per function. Beside a breakpoint the steps
// stop short of it; at the breakpoint the value must equal one of the two
// one-sided limits.

import (
	"fmt"
	"math"
	"strconv"
)

// Tolerances of the check: a derivative passes at x when it is within
// checkRelTol of the finite difference, or within checkErrMul times the
// difference's own error estimate, or below what rounding lets finite
// differences of g resolve (checkFloor·ε·|g(x)|/h).
// One-sided differences are less accurate than central ones (their error
// estimate is less reliable, too): at a breakpoint and when telling a kink
// apart the relative tolerance is checkSideTol.
const (
	checkRelTol  = 1e-6
	checkSideTol = 1e-4
	checkErrMul  = 8
	checkFloor   = 64
	// ridders' tableau: the step shrinks by riddersCon per row, at most
	// riddersRows rows, and stops once the error grows riddersSafe-fold.
	riddersCon  = 1.4
	riddersRows = 12
	riddersSafe = 2.0
	// farOut: a check failing only beyond it suggests CheckRange.
	farOut = 1e4
)

// CheckDerivatives compares a's f' with finite differences of f, and f”
// with finite differences of f', and returns an error naming the worst
// point (and the failing point nearest 0) if either disagrees anywhere on
// its grid: every x = k/8 in [−10, 10], ±10·1.25ᵏ out to ±10⁴, powers of
// ten, sparser as they grow, on to ±10³⁰⁰ (tails where f overflows are
// skipped), ±10⁻³ and ±10⁻⁸, and each breakpoint b with b ± 10⁻⁶,
// 10⁻³, 0.05 and 0.3 beside it. New and NewParam call it; it
// works on the built-in activations too. It evaluates F, D1 and D2 some
// 7000 times in all.
//
// A point passes when the derivative is within a relative 1e-6 of the
// finite difference, or within the difference's own error estimate (×8),
// or below the rounding floor of finite differences there; at a breakpoint
// it must match the left or the right limit, to a relative 1e-4. A
// derivative wrong by a smaller amount, or only between grid points, is
// not caught.
//
// Only the points inside a's CheckRange (Def.CheckRange; the whole line
// unless narrowed) are compared. Everywhere on the grid, inside the range
// or not, f, f' and f” must not be NaN: the kernels apply an activation
// to any input, so an f undefined on part of the line would surface as a
// NaN loss in training; the error names the point nearest 0.
func (a Activation) CheckDerivatives() (err error) {
	if err := a.Validate(); err != nil {
		return err
	}
	c := checker{a: a, bp: a.Breakpoints()}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked at x = %v: %v", orderName[c.order], c.x, r)
		}
	}()
	grid := checkGrid(c.bp)
	if err := c.defined(grid); err != nil {
		return err
	}
	r := a.CheckRange()
	var in []float64
	for _, x := range grid {
		if x >= r[0] && x <= r[1] {
			in = append(in, x)
		}
	}
	for order := 1; order <= 2; order++ {
		if err := c.run(order, in); err != nil {
			return err
		}
	}
	return nil
}

// defined returns an error naming the point nearest 0 of grid where f, f'
// or f” (in that order) is NaN.
func (c *checker) defined(grid []float64) error {
	for order := range 3 {
		n, nearest := 0, 0.0
		for _, x := range grid {
			if math.IsNaN(c.eval(order, x)) {
				if n == 0 || math.Abs(x) < math.Abs(nearest) {
					nearest = x
				}
				n++
			}
		}
		if n > 0 {
			return fmt.Errorf("%s(x) is NaN at x = %s (and at %d more of the check's %d points): an activation is applied to any input, so f, f' and f'' must be defined on the whole real line (±Inf where they overflow)",
				orderName[order], num(nearest), n-1, len(grid))
		}
	}
	return nil
}

// orderName names f, f' and f” in messages.
var orderName = [3]string{"f", "f'", "f''"}

// checker checks one activation; order and x say what it evaluates, for
// the message when a user's function panics.
type checker struct {
	a     Activation
	bp    []float64
	order int
	x     float64
}

// eval is f^(order)(x).
func (c *checker) eval(order int, x float64) float64 {
	c.order, c.x = order, x
	return c.a.row.ref[order](x, c.a.param)
}

// mismatch is one point where the derivative and the finite difference
// disagree, by ratio times the tolerance.
type mismatch struct {
	x, got, want, err float64
	limits            [2]float64 // at a breakpoint: the left and right limits
	ratio             float64
	atBreakpoint      bool
}

// run checks f^(order) against finite differences of f^(order−1).
func (c *checker) run(order int, grid []float64) error {
	var worst, nearest mismatch
	bad, compared, dense, denseAll := 0, 0, 0, 0
	for _, x := range grid {
		if math.Abs(x) <= 10 {
			denseAll++
		}
		got := c.eval(order, x)
		var m mismatch
		var ok bool
		if c.isBreakpoint(x) {
			m, ok = c.atBreakpoint(order, x, got)
		} else {
			m, ok = c.central(order, x, got)
		}
		if !ok {
			continue
		}
		compared++
		if math.Abs(x) <= 10 {
			dense++
		}
		if m.ratio > 1 {
			bad++
			if bad == 1 || m.ratio > worst.ratio {
				worst = m
			}
			if bad == 1 || math.Abs(x) < math.Abs(nearest.x) {
				nearest = m
			}
		}
	}
	if 2*dense < denseAll {
		return fmt.Errorf("%s could be compared with finite differences of %s at only %d of the %d points in [-10, 10]: %s is not finite there (%s(0) = %v)",
			orderName[order], orderName[order-1], dense, denseAll, orderName[order-1], orderName[order-1], c.eval(order-1, 0))
	}
	if bad == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s disagrees with finite differences of %s at %d of %d points; worst at %s",
		orderName[order], orderName[order-1], bad, compared, c.describe(order, worst))
	if nearest.x != worst.x {
		msg += "; nearest 0 at " + c.describe(order, nearest)
	}
	if math.Abs(nearest.x) > farOut {
		msg += fmt.Sprintf("; every such point lies beyond ±%g, where a finite difference's steps are about 2⁻³¹·|x| or more: if %s varies faster than that there (a periodic f), set Def.CheckRange to where the check makes sense", farOut, orderName[order-1])
	}
	return fmt.Errorf("%s", msg)
}

// describe says what is wrong at one point: the derivative, the finite
// difference or the one-sided limits, and whether a kink is undeclared.
func (c *checker) describe(order int, m mismatch) string {
	s := fmt.Sprintf("x = %s: %s(x) = %v, ", num(m.x), orderName[order], m.got)
	if m.atBreakpoint {
		return s + fmt.Sprintf("but at this breakpoint the left limit is %v and the right one %v (want one of them)", m.limits[0], m.limits[1])
	}
	s += fmt.Sprintf("finite differences give %v (±%.2g)", m.want, m.err)
	// A kink the definition does not declare: one-sided differences differ.
	if l, r, ok := c.limits(order, m.x); ok && ratio(l[0], r[0], c.tol(order, m.x, l[0], r[0], l[1]+r[1], stepAt(m.x)/8, checkSideTol)) > 1 {
		s += fmt.Sprintf(" (%s is not smooth near there: its slope is %v on the left, %v on the right; if that is intended, list the point in Breakpoints)", orderName[order-1], l[0], r[0])
	}
	return s
}

// central compares got = f^(order)(x) with central differences of
// f^(order−1), their steps kept clear of the breakpoints. ok is false where
// the difference is not finite (f overflows, say).
func (c *checker) central(order int, x, got float64) (mismatch, bool) {
	h0 := stepAt(x)
	for _, b := range c.bp {
		h0 = math.Min(h0, math.Abs(x-b)/2)
	}
	g := func(t float64) float64 { return c.eval(order-1, t) }
	want, e := ridders(func(h float64) float64 { return (g(x+h) - g(x-h)) / (2 * h) }, h0, 2)
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return mismatch{}, false
	}
	r := ratio(got, want, c.tol(order, x, got, want, e, h0, checkRelTol))
	return mismatch{x: x, got: got, want: want, err: e, ratio: r}, true
}

// atBreakpoint compares got = f^(order)(b) with the one-sided limits of
// f^(order) at b, from differences of f^(order−1) on either side.
func (c *checker) atBreakpoint(order int, b, got float64) (mismatch, bool) {
	l, r, ok := c.limits(order, b)
	if !ok {
		return mismatch{}, false
	}
	h0 := stepAt(b) / 8
	q := math.Min(ratio(got, l[0], c.tol(order, b, got, l[0], l[1], h0, checkSideTol)), ratio(got, r[0], c.tol(order, b, got, r[0], r[1], h0, checkSideTol)))
	return mismatch{x: b, got: got, limits: [2]float64{l[0], r[0]}, ratio: q, atBreakpoint: true}, true
}

// ratio is |got − want| in units of tol: 0 when they are equal, +Inf when
// got is not finite but want is.
func ratio(got, want, tol float64) float64 {
	d := math.Abs(got - want)
	switch {
	case d == 0:
		return 0
	case math.IsNaN(d):
		return math.Inf(1)
	}
	return d / tol
}

// limits estimates the left and right limits of f^(order) at x, and their
// error estimates, from differences of f^(order−1) that do not use x
// itself (where a jump's value belongs to one side only) and stay clear of
// other breakpoints. Their steps start smaller than the central ones': a
// one-sided difference is first order in h, and over a long stencil
// Ridders' tableau stops before it converges.
func (c *checker) limits(order int, x float64) (left, right [2]float64, ok bool) {
	h0 := stepAt(x) / 8
	for _, b := range c.bp {
		if b != x {
			h0 = math.Min(h0, math.Abs(x-b)/4)
		}
	}
	g := func(t float64) float64 { return c.eval(order-1, t) }
	// The slope at x of the parabola through x ± h, x ± 2h, x ± 3h: second
	// order in h, then odd and even powers.
	right[0], right[1] = ridders(func(h float64) float64 { return (-5*g(x+h) + 8*g(x+2*h) - 3*g(x+3*h)) / (2 * h) }, h0, 1)
	left[0], left[1] = ridders(func(h float64) float64 { return (5*g(x-h) - 8*g(x-2*h) + 3*g(x-3*h)) / (2 * h) }, h0, 1)
	ok = !math.IsNaN(left[0]) && !math.IsInf(left[0], 0) && !math.IsNaN(right[0]) && !math.IsInf(right[0], 0)
	return left, right, ok
}

// tol is the allowed |got − want| at x for a relative tolerance rel and a
// difference with error estimate errEst and first step h (see the
// constants above).
func (c *checker) tol(order int, x, got, want, errEst, h, rel float64) float64 {
	floor := checkFloor * 0x1p-52 * math.Abs(c.eval(order-1, x)) / h
	return math.Max(rel*math.Max(math.Abs(got), math.Abs(want)), math.Max(checkErrMul*errEst, floor))
}

// stepAt is the first step of the differences at x: about the scale on
// which the activations vary (1/|x| for a Gaussian tail, 1 near 0), and at
// least 2⁻²⁶|x| so that x ± h differ from x in float64.
func stepAt(x float64) float64 {
	return math.Max(0.25/math.Max(1, math.Sqrt(math.Abs(x))), math.Abs(x)*0x1p-26)
}

// ridders extrapolates d(h) to h → 0, where d(h) − d(0) is a series in
// h^p, h^2p, ...: p = 2 for central differences, 1 for one-sided. It
// returns the estimate and its error estimate (Numerical Recipes' dfridr).
func ridders(d func(h float64) float64, h0 float64, p int) (est, errEst float64) {
	var tab [riddersRows][riddersRows]float64
	con := math.Pow(riddersCon, float64(p))
	h := h0
	tab[0][0] = d(h)
	est, errEst = tab[0][0], math.Inf(1)
	for i := 1; i < riddersRows; i++ {
		h /= riddersCon
		tab[0][i] = d(h)
		fac := con
		for j := 1; j <= i; j++ {
			tab[j][i] = (tab[j-1][i]*fac - tab[j-1][i-1]) / (fac - 1)
			fac *= con
			e := math.Max(math.Abs(tab[j][i]-tab[j-1][i]), math.Abs(tab[j][i]-tab[j-1][i-1]))
			if e <= errEst {
				est, errEst = tab[j][i], e
			}
		}
		if math.Abs(tab[i][i]-tab[i-1][i-1]) >= riddersSafe*errEst {
			break
		}
	}
	return est, errEst
}

// checkGrid is CheckDerivatives' grid for breakpoints bp.
func checkGrid(bp []float64) []float64 {
	var xs []float64
	for k := -80; k <= 80; k++ {
		xs = append(xs, float64(k)/8)
	}
	side := []float64{1e-8, 1e-3}
	for x := 10 * 1.25; x <= 1e4; x *= 1.25 {
		side = append(side, x)
	}
	for e := 5; e <= 300; e += max(1, e/3) {
		side = append(side, math.Pow(10, float64(e)))
	}
	for _, x := range side {
		xs = append(xs, x, -x)
	}
	for _, b := range bp {
		xs = append(xs, b)
		for _, d := range []float64{1e-6 * math.Max(1, math.Abs(b)), 1e-3, 0.05, 0.3} {
			xs = append(xs, b-d, b+d)
		}
	}
	return xs
}

func (c *checker) isBreakpoint(x float64) bool {
	for _, b := range c.bp {
		if b == x {
			return true
		}
	}
	return false
}

// num writes x in the shortest decimal that reads back as x.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
