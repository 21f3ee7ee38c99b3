package activation

// Softplus: f(x) = log(1 + e^x), a smooth, convex ReLU.
//
//	f(x)   = max(x, 0) + log1p(e^−|x|)
//	f'(x)  = σ(x)
//	f''(x) = σ(x)·σ(−x)
//
// The max/log1p split never overflows; σ is formed from e = exp(−|x|) so no
// difference of nearly equal numbers occurs.

import "math"

func softplusF(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 0:
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func softplusD1(x float64) float64 {
	switch {
	case x != x:
		return x
	case x >= 0:
		return 1 / (1 + math.Exp(-x))
	case x < -1490:
		return 0
	}
	return expMul(x, 0, 1/(1+math.Exp(x)))
}

func softplusD2(x float64) float64 {
	switch {
	case x != x:
		return x
	case math.Abs(x) > 1490:
		return 0
	}
	q := -math.Abs(x)
	d := 1 + math.Exp(q)
	return expMul(q, 0, 1/(d*d))
}

// Softplus is log(1 + e^x).
var Softplus = of(&softplusRow)

var softplusRow = row{
	name:  "softplus",
	title: fixedTitle("Softplus"),
	ref:   noParam(softplusF, softplusD1, softplusD2),
}
