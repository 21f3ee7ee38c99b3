package activation

// Exact GELU (Hendrycks & Gimpel 2016): f(x) = x·Φ(x).
//
//	f(x)   = x·Φ(x)
//	f'(x)  = Φ(x) + x·φ(x)
//	f''(x) = (2 − x²)·φ(x)
//
// Below x = −37, Φ(x) is subnormal, so f and f' switch to the Mills-ratio
// form Φ(x) = φ(x)·R(−x) (see millsTail), which keeps every intermediate
// normal. f(+Inf) = +Inf and f(−Inf) = −0, with derivatives 1 and 0.

import (
	"math"

	"github.com/geluproject/gelu/ops/simd"
)

func geluF(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 40: // 1 − Φ(40) < 1e-349: f(x) = x exactly in float64
		return x
	case x < -37:
		// x·Φ(x) = −φ(x)·z·R(z) with z = −x.
		return phiMul(x, -millsTail(-x))
	}
	return x * NormalCDF(x)
}

func geluD1(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 40:
		return 1
	case x < -37:
		// Φ(x) + x·φ(x) = φ(x)·(R(z) − z) = −φ(x)·z·(1 − z·R(z)/z²).
		z := -x
		return phiMul(x, -z*(1-millsTail(z)/(z*z)))
	}
	return NormalCDF(x) + phiMul(x, x)
}

func geluD2(x float64) float64 {
	switch {
	case x != x:
		return x
	case math.Abs(x) > 40: // (2−x²)·φ(x) underflows to zero
		return 0
	}
	// fma gives 2 − x² with a single rounding, exact enough near the
	// inflection points ±√2 where the two terms cancel.
	return phiMul(x, math.FMA(-x, x, 2))
}

// GELU is the exact GELU x·Φ(x) (PyTorch's nn.GELU()).
var GELU = of(&geluRow)

var geluRow = row{
	name:  "gelu",
	title: fixedTitle("GELU"),
	ref:   noParam(geluF, geluD1, geluD2),
	simd32: func(order int, _ dd, _ *[8]float64) simd.ID {
		return simd.GELU32D0 + simd.ID(order)
	},
	lane32: func(order int, _ dd, _ *[8]float64) simd.ID {
		return simd.GELULane32D0 + simd.ID(order)
	},
	simd64: func(order int, _ dd, k *[8]float64) simd.ID {
		k[0], k[1], k[2], k[3] = negInvSqrt2.hi, negInvSqrt2.lo, invSqrtPi, invSqrt2Pi
		k[4] = 37 // beyond: the Mills-ratio tail and the split exponential
		return simd.GELU64D0 + simd.ID(order)
	},
}
