package activation

// The sigmoid-gated family f(x) = x·σ(q(x)), σ(t) = 1/(1+e^−t):
//
//	GELU, tanh approximation:    q(x) = 2·√(2/π)·(x + 0.044715·x³)
//	                             (0.5·x·(1+tanh(u)) = x·σ(2u) exactly)
//	GELU, sigmoid approximation: q(x) = 1.702·x
//	SiLU / Swish:                q(x) = x
//	sigmoid-gated unit:          q(x) = β·x
//
// With s = σ(q) and e = exp(−|q|):
//
//	f   = x·s
//	f'  = s + x·q'·s·(1−s)
//	f'' = s·(1−s)·(2q' + x·(1−2s)·q'² + x·q'')
//
// Written this way nothing cancels: 0.5·x·(1+tanh(u)) loses every digit for
// u ≪ 0, and x³ overflowing float32 cannot produce Inf·0. q is carried in
// double-double because e^q amplifies its rounding error by |q|.

import "math"

// gate is q(x) in double-double together with q'(x) and q”(x).
type gate struct {
	q      dd
	q1, q2 float64
}

// linearGate is q(x) = β·x.
func linearGate(beta dd, x float64) gate {
	return gate{q: beta.mulF(x), q1: beta.hi}
}

// tanhGate is q(x) = 2·√(2/π)·(x + 0.044715·x³).
func tanhGate(x float64) gate {
	// Each step keeps its rounding error, which is folded into the next.
	sq, sqErr := twoProd(x, x) // x²
	ax := tanhCubic.mulF(sq)   // a·x²
	ax.lo += tanhCubic.hi * sqErr
	u, uErr := twoSum(1, ax.hi) // 1 + a·x²
	uErr += ax.lo
	v, vErr := twoProd(x, u) // x·(1 + a·x²)
	vErr += x * uErr
	q := tanhSlope2.mulF(v) // 2c·x·(1 + a·x²)
	q.lo += tanhSlope2.hi * vErr
	q1 := tanhSlope2.hi * (1 + 3*tanhCubic.hi*sq) // 2c·(1 + 3a·x²)
	q2 := 6 * tanhSlope2.hi * tanhCubic.hi * x    // 12·a·c·x
	return gate{q: q, q1: q1, q2: q2}
}

// saturated reports whether σ(q) is exactly 0 or 1 in float64 and all
// derivative terms underflow. For x = ±Inf, q is NaN (Inf−Inf inside the
// double-double steps), which also counts as saturated; callers check for
// NaN x first.
func (g gate) saturated() bool { return !(math.Abs(g.q.hi) <= 1490) }

func gatedF(x float64, g gate) float64 {
	switch {
	case x != x:
		return x
	case g.saturated():
		if x > 0 {
			return x
		}
		return math.Copysign(0, -1)
	case g.q.hi >= 0:
		return x / (1 + math.Exp(-g.q.hi))
	}
	d := 1 + math.Exp(g.q.hi)
	return expMul(g.q.hi, g.q.lo, x/d)
}

func gatedD1(x float64, g gate) float64 {
	switch {
	case x != x:
		return x
	case g.saturated():
		if x > 0 {
			return 1
		}
		return 0
	case g.q.hi >= 0:
		e := math.Exp(-g.q.hi)
		d := 1 + e
		return 1/d + x*g.q1*e/(d*d)
	}
	// s = e/d, 1−s = 1/d with e = exp(q):
	// f' = (e/d)·(1 + x·q'/d).
	d := 1 + math.Exp(g.q.hi)
	return expMul(g.q.hi, g.q.lo, (1+x*g.q1/d)/d)
}

func gatedD2(x float64, g gate) float64 {
	switch {
	case x != x:
		return x
	case g.saturated():
		return 0
	}
	// s·(1−s) = e/d² with e = exp(−|q|), d = 1+e, and
	// 1−2s = ∓(1−e)/d = ±expm1(−|q|)/d (upper sign for q ≥ 0).
	qh, ql := g.q.hi, g.q.lo
	if qh >= 0 {
		qh, ql = -qh, -ql
	}
	d := 1 + math.Exp(qh)
	oneMinus2s := math.Expm1(qh) / d
	if g.q.hi < 0 {
		oneMinus2s = -oneMinus2s
	}
	bracket := 2*g.q1 + x*oneMinus2s*g.q1*g.q1 + x*g.q2
	return expMul(qh, ql, bracket/(d*d))
}
