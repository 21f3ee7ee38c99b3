package activation

// The standard normal distribution, computed to a few ulp everywhere,
// including the far tail where Φ(x) is subnormal.

import "math"

// NormalPDF returns φ(x) = exp(−x²/2)/√(2π).
func NormalPDF(x float64) float64 { return phiMul(x, 1) }

// NormalCDF returns Φ(x) = P(Z ≤ x) for Z ~ N(0, 1).
//
// It is computed as erfc(−x/√2)/2, never as (1+erf(x/√2))/2, which cancels
// catastrophically for negative x. The argument −x/√2 is carried in
// double-double precision and its rounding error is corrected to first order,
// because erfc amplifies a relative error ε of its argument t to about 2t²ε.
func NormalCDF(x float64) float64 {
	switch {
	case x != x:
		return x
	case x < -37:
		// erfc(t) would be subnormal; use the Mills-ratio expansion instead.
		z := -x
		return phiMul(x, millsTail(z)/z)
	case x > 40:
		return 1
	}
	t := negInvSqrt2.mulF(x)
	return 0.5*math.Erfc(t.hi) - t.lo*invSqrtPi*math.Exp(-t.hi*t.hi)
}

// phiMul returns m·φ(x), rounding only once when the result is subnormal.
func phiMul(x, m float64) float64 {
	if x != x || m != m {
		return math.NaN()
	}
	if math.Abs(x) > 54 { // φ(54) < 1e-633: zero in float64
		return math.Copysign(0, m)
	}
	sq, sqErr := twoProd(x, x)
	return expMul(-sq/2, -sqErr/2, m*invSqrt2Pi)
}

// expMul returns m·exp(qh+ql) for qh ≤ 0 and |ql| ≤ ulp(qh). When the result
// may be subnormal the exponential is split in two so that every intermediate
// stays normal and only the last multiplication rounds into the subnormal range.
func expMul(qh, ql, m float64) float64 {
	if qh < -700 {
		a := math.Exp(qh / 2)
		return a * (a * (1 + ql) * m)
	}
	return math.Exp(qh) * ((1 + ql) * m)
}

// millsTail returns z·R(z), where R(z) = (1−Φ(z))/φ(z) is the Mills ratio,
// from its asymptotic series 1 − 1/z² + 3/z⁴ − 15/z⁶ + … . For z ≥ 37 the
// ninth term is below 1e-22, far under float64 resolution.
func millsTail(z float64) float64 {
	u := 1 / (z * z)
	sum, term := 1.0, 1.0
	for k := 1; k <= 9; k++ {
		term *= -float64(2*k-1) * u
		sum += term
	}
	return sum
}
