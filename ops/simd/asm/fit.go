package main

// Tables computed when the assembly is generated: powers 2^(j/16) for the
// fast exponential, and the piecewise polynomial for the scaled normal tail
// G(z) = e^{z²/2}·(1 − Φ(z)) used by the float32 GELU kernels.

import (
	"fmt"
	"math"
	"math/big"

	. "github.com/mmcloughlin/avo/operand"
)

const prec = 300 // bits for the generator's own arithmetic

func bf(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }

// pow2Frac returns 2^(j/16) correctly rounded, from 2^(1/16) = √√√√2.
func pow2Frac(j int) float64 {
	r := bf(2)
	for i := 0; i < 4; i++ {
		r.Sqrt(r)
	}
	p := bf(1)
	for i := 0; i < j; i++ {
		p.Mul(p, r)
	}
	v, _ := p.Float64()
	return v
}

// gTail is G(z) = e^{z²/2}·(1 − Φ(z)) = erfc(z/√2)·e^{z²/2}/2 for z ≥ 0,
// from the standard library: each factor is within about 2^−43 of the
// truth for z ≤ 21 (erfc amplifies the rounding of z/√2 by about z²),
// below the 2^−42 the fit must reach.
func gTail(z float64) float64 {
	return 0.5 * math.Erfc(z/math.Sqrt2) * math.Exp(z*z/2)
}

// Polynomial pieces of G: interval i is [i, i+1), evaluated in u = z − i,
// except the last, [15, gMax]: G is close to 1/(z·√(2π)) there, and one
// polynomial covers the whole range where float32 results can still be
// nonzero (beyond gMax, g·f' and g·f” underflow even for g = MaxFloat32).
const (
	gIntervals = 16
	gDegree    = 12
	gMax       = 21
)

// gWidth is the width of interval i.
func gWidth(i int) float64 {
	if i == gIntervals-1 {
		return gMax - (gIntervals - 1)
	}
	return 1
}

// gPieces returns coefficients c[k][i] of u^k on interval i, interpolating G
// at the Chebyshev points of each interval (close to the best polynomial),
// and the largest relative error found on a fine grid (partly the error of
// gTail itself).
func gPieces() (coef [gDegree + 1][gIntervals]float64, worst float64) {
	n := gDegree + 1
	for i := 0; i < gIntervals; i++ {
		// Solve the Vandermonde system in 300-bit arithmetic so that only
		// the final rounding of each coefficient to float64 is inexact.
		a := make([][]*big.Float, n)
		w := gWidth(i)
		for j := 0; j < n; j++ {
			u := w * (1 - math.Cos(float64(2*j+1)*math.Pi/float64(2*n))) / 2
			a[j] = make([]*big.Float, n+1)
			p := bf(1)
			for k := 0; k < n; k++ {
				a[j][k] = new(big.Float).Copy(p)
				p.Mul(p, bf(u))
			}
			a[j][n] = bf(gTail(float64(i) + u))
		}
		x := solve(a)
		for k := 0; k < n; k++ {
			coef[k][i], _ = x[k].Float64()
		}
		for s := 0; s <= 2000; s++ {
			u := w * float64(s) / 2000
			var h float64
			for k := n - 1; k >= 0; k-- {
				h = h*u + coef[k][i]
			}
			want := gTail(float64(i) + u)
			worst = math.Max(worst, math.Abs(h/want-1))
		}
	}
	return coef, worst
}

// solve does Gaussian elimination with partial pivoting on the augmented
// matrix a (n rows, n+1 columns).
func solve(a [][]*big.Float) []*big.Float {
	n := len(a)
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if new(big.Float).Abs(a[r][col]).Cmp(new(big.Float).Abs(a[piv][col])) > 0 {
				piv = r
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < n; r++ {
			f := new(big.Float).SetPrec(prec).Quo(a[r][col], a[col][col])
			for k := col; k <= n; k++ {
				a[r][k].Sub(a[r][k], new(big.Float).SetPrec(prec).Mul(f, a[col][k]))
			}
		}
	}
	x := make([]*big.Float, n)
	for r := n - 1; r >= 0; r-- {
		s := new(big.Float).SetPrec(prec).Set(a[r][n])
		for k := r + 1; k < n; k++ {
			s.Sub(s, new(big.Float).SetPrec(prec).Mul(a[r][k], x[k]))
		}
		x[r] = s.Quo(s, a[r][r])
	}
	return x
}

// gTable emits the coefficient tables, one 16-entry row pair per power of u,
// and checks the fit.
func gTable() [gDegree + 1]Mem {
	coef, worst := gPieces()
	if worst > 0x1p-42 {
		panic(fmt.Sprintf("G fit error %g exceeds 2^-42", worst))
	}
	gFitError = worst
	var rows [gDegree + 1]Mem
	for k := range coef {
		var w [16]uint64
		for i := range w {
			w[i] = math.Float64bits(coef[k][i])
		}
		rows[k] = consts.vec8([8]uint64(w[:8]))
		consts.vec8([8]uint64(w[8:]))
	}
	return rows
}

// gFitError is the measured relative error of the G pieces, reported in the
// generated file.
var gFitError float64
