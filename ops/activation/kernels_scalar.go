package activation

// The portable kernels: the float64 reference evaluated per element and
// rounded once. The activation is resolved once per call to a plain
// function, and a row may bring loops of its own (ReLU, whose body is a
// comparison).

import (
	"math"
	"unsafe"

	"github.com/geluproject/gelu/graph"
)

func portableChunk[T graph.Float](a Activation, order int, dst, x, g []T, add bool) {
	if unsafe.Sizeof(T(0)) == 4 {
		if l := a.row.loop32; l != nil {
			l(order, as[float32](dst), as[float32](x), as[float32](g), add)
			return
		}
	} else if l := a.row.loop64; l != nil {
		l(order, as[float64](dst), as[float64](x), as[float64](g), add)
		return
	}
	f := a.Derivative(order)
	x = x[:len(dst)]
	if unsafe.Sizeof(T(0)) == 4 {
		blockChunk(f, order, dst, x, g, add)
		return
	}
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

// convBlock is how many elements blockChunk converts at a time.
const convBlock = 64

// blockChunk is scalarChunk for float32: it widens a block of x into a
// float64 opkit.Buffer, evaluates f there, and narrows the results. The results
// are the same; the speed is not. Converting inside the loop that calls f
// (CVTSS2SD, CVTSD2SS) writes only the low lanes of a register, so each
// conversion waits for the previous element's whole evaluation, and the
// loop runs at f's latency instead of its throughput: 2.7× slower for
// math.Expm1 (ELU, Softplus) on the development machine.
func blockChunk[T graph.Float](f func(float64) float64, order int, dst, x, g []T, add bool) {
	var buf [convBlock]float64
	for lo := 0; lo < len(dst); lo += convBlock {
		n := min(convBlock, len(dst)-lo)
		b := buf[:n]
		for i, v := range x[lo : lo+n] {
			b[i] = float64(v)
		}
		for i, v := range b {
			b[i] = f(v)
		}
		if order > 0 {
			for i, v := range g[lo : lo+n] {
				b[i] *= float64(v)
			}
		}
		d := dst[lo : lo+n]
		if add {
			for i := range d {
				d[i] += T(b[i])
			}
			continue
		}
		for i := range d {
			d[i] = T(b[i])
		}
	}
}

// reluChunk is the ReLU kernel without branches on the data (random
// signs make a branch mispredict every other element: this is 4× faster).
// The results equal the reference's: f(x) = x for x > 0 or NaN, else +0
// (Go's max(x, 0) is exactly that); f' is 1, 0 or NaN; f” is 0 or NaN;
// then g·f rounded.
func reluChunk[T graph.Float](order int, dst, x, g []T, add bool) {
	x = x[:len(dst)]
	if order == 0 {
		for i, v := range x {
			dst[i] = max(v, 0)
		}
		return
	}
	g = g[:len(dst)]
	if unsafe.Sizeof(T(0)) == 4 {
		reluDeriv32(order, as[float32](dst), as[float32](x), as[float32](g), add)
		return
	}
	reluDeriv64(order, as[float64](dst), as[float64](x), as[float64](g), add)
}

// reluDeriv32 sets (or adds to) dst[i] g[i]·f^(order)(x[i]) for order 1 or
// 2. The factor 0 or 1 is made from bits, so that no branch or conversion
// instruction ties one element to the next; g·0 is ±0, or NaN for an
// infinite g, as in float64.
func reluDeriv32(order int, dst, x, g []float32, add bool) {
	var on uint32
	if order == 1 {
		on = 0x3f800000 // 1.0
	}
	for i, v := range x {
		var k uint32
		if v > 0 {
			k = on
		}
		d := g[i] * math.Float32frombits(k)
		if v != v {
			d = v
		}
		if add {
			d += dst[i]
		}
		dst[i] = d
	}
}

// reluDeriv64 is reluDeriv32 for float64.
func reluDeriv64(order int, dst, x, g []float64, add bool) {
	var on uint64
	if order == 1 {
		on = 0x3ff0000000000000 // 1.0
	}
	for i, v := range x {
		var k uint64
		if v > 0 {
			k = on
		}
		d := g[i] * math.Float64frombits(k)
		if v != v {
			d = v
		}
		if add {
			d += dst[i]
		}
		dst[i] = d
	}
}
