package ops

// ELU (Clevert et al. 2015) with scale α > 0:
//
//	f(x)   = x                for x > 0,   α·(e^x − 1) otherwise
//	f'(x)  = 1                for x > 0,   α·e^x       otherwise
//	f''(x) = 0                for x > 0,   α·e^x       otherwise
//
// At x = 0 the left-hand values are used (f'(0) = α, f''(0) = α), as PyTorch
// does; for α = 1 f' is continuous there but f'' jumps from 1 to 0.

import "math"

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
