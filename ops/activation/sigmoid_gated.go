package activation

import (
	"math"
	"strconv"

	"github.com/geluproject/gelu/ops/simd"
)

// The units x·σ(β·x): the sigmoid approximation of GELU (β = 1.702), SiLU
// (β = 1) and the sigmoid-gated unit with any β > 0. They share the gate
// q(x) = β·x of gated.go and its kernels; each is its own row.

var (
	// GELUSigmoid is x·σ(1.702·x), the sigmoid approximation of GELU.
	GELUSigmoid = of(&geluSigmoidRow)
	// SiLU is x·σ(x), also called Swish.
	SiLU = of(&siluRow)
)

var geluSigmoidRow = row{
	name:         "gelu_sigmoid",
	title:        fixedTitle("GELU (sigmoid)"),
	defaultParam: sigmoidBeta,
	ref:          linearGatedRef,
	simd32:       linearGatedSIMD32,
	lane32:       fixedGateLane32(sigmoidBeta, simd.GELUSigmoidLane32D0),
	simd64:       linearGatedSIMD64,
}

var siluRow = row{
	name:         "silu",
	alias:        "swish",
	title:        fixedTitle("SiLU"),
	defaultParam: dd{hi: 1},
	ref:          linearGatedRef,
	simd32:       linearGatedSIMD32,
	lane32:       fixedGateLane32(dd{hi: 1}, simd.SiLULane32D0),
	simd64:       linearGatedSIMD64,
}

var sigmoidGatedRow = row{
	name: "sigmoid_gated",
	title: func(beta float64) string {
		if beta == math.Sqrt(8/math.Pi) {
			return "x·σ(βx), β=√(8/π)"
		}
		return "x·σ(βx), β=" + strconv.FormatFloat(beta, 'g', 4, 64)
	},
	param:          "β",
	defaultParam:   dd{hi: math.Sqrt(8 / math.Pi)},
	nameShowsParam: true,
	ref:            linearGatedRef,
	simd32:         linearGatedSIMD32,
	simd64:         linearGatedSIMD64,
}

var linearGatedRef = [3]func(float64, dd) float64{
	func(x float64, p dd) float64 { return gatedF(x, linearGate(p, x)) },
	func(x float64, p dd) float64 { return gatedD1(x, linearGate(p, x)) },
	func(x float64, p dd) float64 { return gatedD2(x, linearGate(p, x)) },
}

// maxGateCoef bounds the gate coefficients the float32 gated kernels
// accept: beyond it, q'² in f” could overflow.
const maxGateCoef = 1e30

func linearGatedSIMD32(order int, p dd, k *[8]float64) simd.ID {
	if p.hi > maxGateCoef {
		return simd.None
	}
	k[0] = p.hi
	return simd.Gated32D0 + simd.ID(order)
}

// fixedGateLane32 is the lane32 of a row whose float32-lane kernels have
// the gate coefficient beta built in (family is their f kernel).
func fixedGateLane32(beta dd, family simd.ID) func(int, dd, *[8]float64) simd.ID {
	return func(order int, p dd, _ *[8]float64) simd.ID {
		if p != beta {
			return simd.None
		}
		return family + simd.ID(order)
	}
}

func linearGatedSIMD64(order int, p dd, k *[8]float64) simd.ID {
	if order > 1 {
		return simd.None // the gated f'' uses expm1
	}
	k[0], k[1] = p.hi, p.lo
	k[4] = 690 / p.hi // |β·x| ≤ 690·(1+2^−52) < 700
	return simd.Linear64D0 + simd.ID(order)
}
