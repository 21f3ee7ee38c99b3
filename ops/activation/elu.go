package activation

// ELU (Clevert et al. 2015) with scale α > 0:
//
//	f(x)   = x                for x > 0,   α·(e^x − 1) otherwise
//	f'(x)  = 1                for x > 0,   α·e^x       otherwise
//	f''(x) = 0                for x > 0,   α·e^x       otherwise
//
// At x = 0 the left-hand values are used (f'(0) = α, f''(0) = α), as PyTorch
// does; for α = 1 f' is continuous there but f'' jumps from 1 to 0.

import (
	"math"
	"strconv"

	"github.com/geluproject/gelu/ops/simd"
)

func eluF(x, alpha float64) float64 {
	if x > 0 || x != x {
		return x
	}
	return alpha * math.Expm1(x)
}

func eluD1(x, alpha float64) float64 {
	switch {
	case x != x:
		return x
	case x > 0:
		return 1
	case x < -1490:
		return 0
	}
	return expMul(x, 0, alpha)
}

func eluD2(x, alpha float64) float64 {
	switch {
	case x != x:
		return x
	case x > 0, x < -1490:
		return 0
	}
	return expMul(x, 0, alpha)
}

// ELU is the exponential linear unit with α = 1; ELUAlpha gives other α.
var ELU = of(&eluRow)

var eluRow = row{
	name: "elu",
	title: func(alpha float64) string {
		if alpha == 1 {
			return "ELU"
		}
		return "ELU (α=" + strconv.FormatFloat(alpha, 'g', -1, 64) + ")"
	},
	param:        "α",
	defaultParam: dd{hi: 1},
	ref: [3]func(float64, dd) float64{
		func(x float64, p dd) float64 { return eluF(x, p.hi) },
		func(x float64, p dd) float64 { return eluD1(x, p.hi) },
		func(x float64, p dd) float64 { return eluD2(x, p.hi) },
	},
	breakpoints: []float64{0},
	simd32: func(order int, p dd, k *[8]float64) simd.ID {
		k[0] = p.hi
		return simd.ELU32D0 + simd.ID(order)
	},
}
