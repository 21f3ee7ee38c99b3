package activation

// Double-double arithmetic for the few places where rounding an intermediate
// argument would be amplified: exp(q) has relative condition number |q|, so a
// 1-ulp error in q = -x²/2 at x = -30 becomes a 450-ulp error in φ(x). Carrying
// the argument as hi+lo keeps the final results within a few ulp.

import (
	"math"
	"math/big"
)

// dd is the unevaluated sum hi+lo with |lo| ≤ ulp(hi)/2.
type dd struct{ hi, lo float64 }

// twoProd returns p = fl(a·b) and the exact rounding error e = a·b − p.
//
// The conversion float64(a * b) is not redundant: Go may fuse a product
// with a later addition into one FMA (it does on arm64, ppc64, s390x and
// amd64 from GOAMD64=v3), and then a caller's p + e would use the unrounded
// product and the error-free transformations below would be off by up to
// an ulp of p. An explicit conversion forces the rounding.
func twoProd(a, b float64) (p, e float64) {
	p = float64(a * b)
	return p, math.FMA(a, b, -p)
}

// twoSum returns s = fl(a+b) and the exact rounding error e = a+b − s.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// mulF returns the double-double product c·x for a float64 x.
func (c dd) mulF(x float64) dd {
	p, e := twoProd(c.hi, x)
	e += c.lo * x
	s, err := twoSum(p, e)
	return dd{s, err}
}

// pi is π to 60 digits; every other constant below is derived from it in
// 256-bit arithmetic, so no rounded literal is copied from anywhere.
const pi = "3.14159265358979323846264338327950288419716939937510582097494459"

func bigf(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
	if err != nil {
		panic(err) // only reached with a malformed literal in this file
	}
	return f
}

func ddOf(x *big.Float) dd {
	hi, _ := x.Float64()
	lo, _ := new(big.Float).SetPrec(256).Sub(x, new(big.Float).SetFloat64(hi)).Float64()
	return dd{hi, lo}
}

func bigSqrt(x *big.Float) *big.Float { return new(big.Float).SetPrec(256).Sqrt(x) }

func bigQuo(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(256).Quo(a, b) }

var (
	// negInvSqrt2 is −1/√2: Φ(x) = erfc(−x/√2)/2.
	negInvSqrt2 = ddOf(new(big.Float).Neg(bigQuo(bigf("1"), bigSqrt(bigf("2")))))
	// invSqrt2Pi is 1/√(2π), the peak of the standard normal density.
	invSqrt2Pi = ddOf(bigQuo(bigf("1"), bigSqrt(new(big.Float).SetPrec(256).Mul(bigf("2"), bigf(pi))))).hi
	// invSqrtPi is 1/√π, for the derivative of erfc.
	invSqrtPi = ddOf(bigQuo(bigf("1"), bigSqrt(bigf(pi)))).hi
	// tanhSlope2 is 2·√(2/π): the tanh approximation is x·σ(2·√(2/π)·(x + 0.044715x³)).
	tanhSlope2 = ddOf(new(big.Float).SetPrec(256).Mul(bigf("2"), bigSqrt(bigQuo(bigf("2"), bigf(pi)))))
	// tanhCubic is the 0.044715 of the tanh approximation (Hendrycks & Gimpel).
	tanhCubic = ddOf(bigf("0.044715"))
	// sigmoidBeta is the 1.702 of the sigmoid approximation x·σ(1.702x).
	sigmoidBeta = ddOf(bigf("1.702"))
)
