package ops

// The portable kernels: the float64 reference evaluated per element and
// rounded once. The activation is resolved once per call to a plain
// function, instead of per element through Activation's switch, and ReLU,
// whose body is a comparison, gets loops of its own.

import "math"

func scalarChunk[T Float](a Activation, order int, dst, x, g []T, add bool) {
	if a.kind == kindReLU {
		reluChunk(order, dst, x, g, add)
		return
	}
	f := scalarFunc(a, order)
	x = x[:len(dst)]
	if order == 0 {
		for i, v := range x {
			dst[i] = T(f(float64(v)))
		}
		return
	}
	g = g[:len(dst)]
	if add {
		for i := range dst {
			dst[i] += T(float64(g[i]) * f(float64(x[i])))
		}
		return
	}
	for i := range dst {
		dst[i] = T(float64(g[i]) * f(float64(x[i])))
	}
}

// scalarFunc returns f, f' or f” of a as a function with the kind and the
// parameter already resolved.
func scalarFunc(a Activation, order int) func(float64) float64 {
	p := a.param
	switch a.kind {
	case kindGELU:
		return [...]func(float64) float64{geluF, geluD1, geluD2}[order]
	case kindGELUTanh:
		return [...]func(float64) float64{
			func(x float64) float64 { return gatedF(x, tanhGate(x)) },
			func(x float64) float64 { return gatedD1(x, tanhGate(x)) },
			func(x float64) float64 { return gatedD2(x, tanhGate(x)) },
		}[order]
	case kindGELUSigmoid, kindSiLU, kindSigmoidGated:
		return [...]func(float64) float64{
			func(x float64) float64 { return gatedF(x, linearGate(p, x)) },
			func(x float64) float64 { return gatedD1(x, linearGate(p, x)) },
			func(x float64) float64 { return gatedD2(x, linearGate(p, x)) },
		}[order]
	case kindSoftplus:
		return [...]func(float64) float64{softplusF, softplusD1, softplusD2}[order]
	case kindELU:
		return [...]func(float64) float64{
			func(x float64) float64 { return eluF(x, p.hi) },
			func(x float64) float64 { return eluD1(x, p.hi) },
			func(x float64) float64 { return eluD2(x, p.hi) },
		}[order]
	case kindReLU:
		return [...]func(float64) float64{reluF, reluD1, reluD2}[order]
	}
	return func(float64) float64 { return math.NaN() }
}

// reluChunk is the ReLU kernel with the comparisons inline. The results
// equal the reference's: f(x) = x for x > 0 or NaN, else +0; f' is 1, 0 or
// NaN; f” is 0 or NaN; then g·f rounded.
func reluChunk[T Float](order int, dst, x, g []T, add bool) {
	x = x[:len(dst)]
	if order == 0 {
		for i, v := range x {
			if !(v > 0 || v != v) {
				v = 0
			}
			dst[i] = v
		}
		return
	}
	g = g[:len(dst)]
	for i := range dst {
		var d T
		switch v := x[i]; {
		case v != v:
			d = v
		case v > 0 && order == 1:
			d = g[i]
		default:
			d = g[i] * 0 // ±0, or NaN for infinite g, as g·0 in float64
		}
		if add {
			dst[i] += d
		} else {
			dst[i] = d
		}
	}
}
