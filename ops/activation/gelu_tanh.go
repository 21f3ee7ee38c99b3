package activation

import "github.com/geluproject/gelu/ops/simd"

// GELUTanh is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (PyTorch's
// nn.GELU(approximate="tanh"), used by GPT-2 and BERT's TF code), computed
// as x·σ(q(x)) with the gate q of gated.go.
var GELUTanh = of(&geluTanhRow)

var geluTanhRow = row{
	name:  "gelu_tanh",
	title: fixedTitle("GELU (tanh)"),
	ref: [3]func(float64, dd) float64{
		func(x float64, _ dd) float64 { return gatedF(x, tanhGate(x)) },
		func(x float64, _ dd) float64 { return gatedD1(x, tanhGate(x)) },
		func(x float64, _ dd) float64 { return gatedD2(x, tanhGate(x)) },
	},
	simd32: func(order int, _ dd, k *[8]float64) simd.ID {
		// q = 2c·(x + a·x³) = x·(2c + 2c·a·x²)
		k[0], k[1] = tanhSlope2.hi, tanhSlope2.hi*tanhCubic.hi
		return simd.Gated32D0 + simd.ID(order)
	},
	lane32: func(order int, _ dd, _ *[8]float64) simd.ID {
		return simd.GELUTanhLane32D0 + simd.ID(order)
	},
	simd64: func(order int, _ dd, k *[8]float64) simd.ID {
		if order > 1 {
			return simd.None // the gated f'' uses expm1
		}
		k[0], k[1], k[2], k[3] = tanhCubic.hi, tanhCubic.lo, tanhSlope2.hi, tanhSlope2.lo
		k[4], k[5] = 20, 3*tanhCubic.hi // |q(20)| ≈ 603 < 700: no split exponential
		return simd.Tanh64D0 + simd.ID(order)
	},
}
