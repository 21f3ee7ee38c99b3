package analysis

// Expectations under the standard normal, E[f(X)] and Var[f(X)] for
// X ~ N(0, 1): by adaptive Gauss–Kronrod quadrature with an error estimate,
// and by Monte Carlo with a standard error. They answer questions such as
// "what is E[GELU'(X)²] for a unit-Gaussian pre-activation?" without a graph.

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/geluproject/gelu/ops/activation"
)

// Estimate is a computed number with its uncertainty. For quadrature Err is
// a conservative estimate of the absolute error (the summed |K15 − G7|
// differences); for Monte Carlo it is the standard error (one standard
// deviation of the estimator).
type Estimate struct {
	Value float64
	Err   float64
}

// String formats e as "value ± err".
func (e Estimate) String() string {
	return strconv.FormatFloat(e.Value, 'g', 10, 64) + " ± " + strconv.FormatFloat(e.Err, 'g', 2, 64)
}

// Z returns (e.Value − ref)/e.Err, the distance from ref in units of e's
// error. It is ±Inf when Err is 0 and Value ≠ ref, and 0 when they are equal.
func (e Estimate) Z(ref float64) float64 {
	if e.Value == ref {
		return 0
	}
	return (e.Value - ref) / e.Err
}

// ZDiff returns the difference a − b in units of their combined error
// √(a.Err² + b.Err²): how many standard errors apart two independent
// estimates of the same quantity are.
func ZDiff(a, b Estimate) float64 {
	return Estimate{a.Value - b.Value, math.Hypot(a.Err, b.Err)}.Z(0)
}

// Quadrature tolerances: stop when the summed error estimate is below
// max(quadAbsTol, quadRelTol·|result|). quadMaxIntervals bounds the work
// (each interval costs 15 evaluations of f).
const (
	quadAbsTol       = 1e-14
	quadRelTol       = 1e-12
	quadMaxIntervals = 4000
)

// NormalExpectation returns E[f(X)] for X ~ N(0, 1), the integral of
// f(x)φ(x) over the real line, by globally adaptive 15-point Gauss–Kronrod
// quadrature. The line is split at 0 and at the given breakpoints (where f
// has a kink or jump); each half-line is mapped onto (0, 1] by
// x = b ± (1−t)/t. Where φ(x) underflows to 0 (|x| > 38.6) f is not
// evaluated, so f may overflow there.
//
// The error estimate sums |K15 − G7| over the final intervals, which for
// smooth integrands greatly overstates the true error. A non-nil error
// means bad input, a non-finite f(x)φ(x), or that the tolerance (about 1e-12
// relative) was not reached; in the last case the Estimate is still the
// best one found.
func NormalExpectation(f func(float64) float64, breakpoints ...float64) (Estimate, error) {
	if f == nil {
		return Estimate{}, fmt.Errorf("analysis.NormalExpectation: f is nil")
	}
	pts := append([]float64{0}, breakpoints...)
	for _, b := range breakpoints {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return Estimate{}, fmt.Errorf("analysis.NormalExpectation: breakpoint %v, want finite values", b)
		}
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)

	q := &quad{f: f}
	var h intervalHeap
	// One segment per piece of the line: (−∞, p0], [p0, p1], ..., [pk, ∞).
	segs := []segment{{lo: pts[0], dir: -1}}
	for i := 0; i+1 < len(pts); i++ {
		segs = append(segs, segment{lo: pts[i], hi: pts[i+1]})
	}
	segs = append(segs, segment{lo: pts[len(pts)-1], dir: +1})
	for _, s := range segs {
		a, b := s.lo, s.hi
		if s.dir != 0 {
			a, b = 0, 1
		}
		iv := q.kronrod(s, a, b)
		if q.err != nil {
			return Estimate{}, q.err
		}
		heap.Push(&h, iv)
	}
	for {
		var sum, errSum float64
		for _, iv := range h {
			sum += iv.val
			errSum += iv.err
		}
		est := Estimate{sum, errSum}
		if errSum <= math.Max(quadAbsTol, quadRelTol*math.Abs(sum)) {
			return est, nil
		}
		if len(h) >= quadMaxIntervals {
			return est, fmt.Errorf("analysis.NormalExpectation: error estimate %.3g after %d intervals, want ≤ %.3g; f may be too rough or E[|f(X)|] infinite",
				errSum, len(h), math.Max(quadAbsTol, quadRelTol*math.Abs(sum)))
		}
		worst := heap.Pop(&h).(interval)
		mid := worst.a + (worst.b-worst.a)/2
		if mid <= worst.a || mid >= worst.b { // cannot split further: keep it as it is
			return est, fmt.Errorf("analysis.NormalExpectation: error estimate %.3g, interval [%v, %v] cannot be split further; is f discontinuous away from the breakpoints?",
				errSum, worst.seg.x(worst.a), worst.seg.x(worst.b))
		}
		left, right := q.kronrod(worst.seg, worst.a, mid), q.kronrod(worst.seg, mid, worst.b)
		if q.err != nil {
			return Estimate{}, q.err
		}
		heap.Push(&h, left)
		heap.Push(&h, right)
	}
}

// NormalVariance returns Var[f(X)] for X ~ N(0, 1) by quadrature, as
// E[(f(X) − m)²] with m = E[f(X)] computed first, which does not cancel the
// way E[f²] − m² does. Its error estimate adds the squared error of m, the
// only way the error of m enters a centred second moment.
func NormalVariance(f func(float64) float64, breakpoints ...float64) (Estimate, error) {
	if f == nil {
		return Estimate{}, fmt.Errorf("analysis.NormalVariance: f is nil")
	}
	m, err := NormalExpectation(f, breakpoints...)
	if err != nil {
		return Estimate{}, err
	}
	v, err := NormalExpectation(func(x float64) float64 { d := f(x) - m.Value; return d * d }, breakpoints...)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{v.Value, v.Err + m.Err*m.Err}, nil
}

// segment is one piece of the real line: [lo, hi] if dir is 0, otherwise
// the half-line from lo towards dir·∞, parametrized by t in (0, 1].
type segment struct {
	lo, hi float64
	dir    float64
}

// x maps the integration variable to the real line.
func (s segment) x(t float64) float64 {
	if s.dir == 0 {
		return t
	}
	return s.lo + s.dir*(1-t)/t
}

// jacobian is |dx/dt|.
func (s segment) jacobian(t float64) float64 {
	if s.dir == 0 {
		return 1
	}
	return 1 / (t * t)
}

type interval struct {
	seg      segment
	a, b     float64
	val, err float64
}

type intervalHeap []interval

func (h intervalHeap) Len() int           { return len(h) }
func (h intervalHeap) Less(i, j int) bool { return h[i].err > h[j].err }
func (h intervalHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intervalHeap) Push(x any)        { *h = append(*h, x.(interval)) }
func (h *intervalHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// quad evaluates f(x)φ(x)·|dx/dt| and remembers the first non-finite value.
type quad struct {
	f   func(float64) float64
	err error
}

func (q *quad) g(s segment, t float64) float64 {
	x := s.x(t)
	w := activation.NormalPDF(x)
	if w == 0 {
		return 0
	}
	v := q.f(x) * w * s.jacobian(t)
	if (math.IsNaN(v) || math.IsInf(v, 0)) && q.err == nil {
		q.err = fmt.Errorf("analysis.NormalExpectation: f(%v) = %v, f(x)φ(x) is not finite", x, q.f(x))
	}
	return v
}

// Nodes and weights of the 7-point Gauss and 15-point Kronrod rules on
// [−1, 1] (Piessens et al., QUADPACK); the test checks that they integrate
// polynomials of degree 13 and 22 exactly.
var (
	kronrodX = [8]float64{
		0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
		0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
		0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
		0.207784955007898467600689403773245, 0,
	}
	kronrodW = [8]float64{
		0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
		0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
		0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
		0.204432940075298892414161999234649, 0.209482141084727828012999174891714,
	}
	// gaussW[j] is the Gauss weight of node kronrodX[2j+1].
	gaussW = [4]float64{
		0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
		0.381830050505118944950369775488975, 0.417959183673469387755102040816327,
	}
)

// kronrod applies the G7/K15 pair to [a, b] of segment s.
func (q *quad) kronrod(s segment, a, b float64) interval {
	c, h := a+(b-a)/2, (b-a)/2
	fc := q.g(s, c)
	k, g := fc*kronrodW[7], fc*gaussW[3]
	for j := 0; j < 7; j++ {
		d := h * kronrodX[j]
		sum := q.g(s, c-d) + q.g(s, c+d)
		k += kronrodW[j] * sum
		if j%2 == 1 {
			g += gaussW[j/2] * sum
		}
	}
	k, g = k*h, g*h
	// The rule cannot resolve differences below rounding: never claim an
	// error smaller than a few ulp of the interval's contribution.
	err := math.Max(math.Abs(k-g), 50*0x1p-52*math.Abs(k))
	return interval{seg: s, a: a, b: b, val: k, err: err}
}

// NormalSource is a stream of standard normal samples; *rng.RNG from
// package graph/rng is one (ops does not import it, to keep ops at the
// bottom of the import graph).
type NormalSource interface {
	Normal() float64
}

// NormalExpectationMC estimates E[f(X)] for X ~ N(0, 1) from n samples of
// src, returning the sample mean and its standard error s/√n. The same
// source state gives the same estimate. If every sample gives the same
// value (a rare event that was never hit, say) the standard error is 0:
// the sample cannot tell how uncertain it is, and more samples are needed.
func NormalExpectationMC(f func(float64) float64, n int, src NormalSource) (Estimate, error) {
	m, err := momentsMC("analysis.NormalExpectationMC", f, n, src)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{m.mean, math.Sqrt(m.m2 / float64(n-1) / float64(n))}, nil
}

// NormalVarianceMC estimates Var[f(X)] for X ~ N(0, 1) from n samples of
// src: the unbiased sample variance s², with the standard error from
// Var[s²] = (μ₄ − σ⁴·(n−3)/(n−1))/n, where the central moments μ₄ and σ²
// are replaced by their plug-in estimates m₄ = Σ(y−ȳ)⁴/n and m₂ = Σ(y−ȳ)²/n.
// Using m₂ rather than s² there matters when μ₄ ≈ σ⁴ (a fair 0/1 variable
// such as ReLU'(X)): the two terms then nearly cancel and only consistent
// estimates keep the remaining 2σ⁴/(n(n−1)).
func NormalVarianceMC(f func(float64) float64, n int, src NormalSource) (Estimate, error) {
	m, err := momentsMC("analysis.NormalVarianceMC", f, n, src)
	if err != nil {
		return Estimate{}, err
	}
	fn := float64(n)
	m2, m4 := m.m2/fn, m.m4/fn
	v := (m4 - m2*m2*(fn-3)/(fn-1)) / fn
	return Estimate{m.m2 / (fn - 1), math.Sqrt(math.Max(v, 0))}, nil
}

// moments holds the running mean and the central sums Σ(y−ȳ)^k, k = 2, 3, 4.
type moments struct{ mean, m2, m3, m4 float64 }

// momentsMC accumulates the moments of f(X) in one pass with the update of
// Pébay (2008), which stays accurate when the mean is large compared with
// the spread.
func momentsMC(who string, f func(float64) float64, n int, src NormalSource) (moments, error) {
	var m moments
	switch {
	case f == nil:
		return m, fmt.Errorf("%s: f is nil", who)
	case src == nil:
		return m, fmt.Errorf("%s: source is nil; use e.g. rng.New(seed, name)", who)
	case n < 4:
		return m, fmt.Errorf("%s: n = %d samples, want at least 4", who, n)
	}
	for i := 1; i <= n; i++ {
		x := src.Normal()
		y := f(x)
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return m, fmt.Errorf("%s: f(%v) = %v at sample %d, want a finite value", who, x, y, i)
		}
		k := float64(i)
		d := y - m.mean
		dn := d / k
		dn2 := dn * dn
		t := d * dn * (k - 1)
		m.mean += dn
		m.m4 += t*dn2*(k*k-3*k+3) + 6*dn2*m.m2 - 4*dn*m.m3
		m.m3 += t*dn*(k-2) - 3*dn*m.m2
		m.m2 += t
	}
	return m, nil
}
