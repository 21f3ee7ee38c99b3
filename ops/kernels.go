package ops

// Slice kernels: the activation applied elementwise to whole tensors, split
// across cores (parallel.go).
//
// Every kernel computes what the portable loops (kernels_scalar.go)
// compute: the float64 scalar reference F, Deriv, Deriv2, times g, rounded
// once to the element type. On amd64 CPUs with AVX-512 the GELU family
// (exact, tanh, sigmoid, SiLU, sigmoid-gated), and ELU in float32, run in
// generated assembly (kernels_amd64.s, made by ops/asm) that gives the
// same results: float64
// repeats the reference's operations bit for bit, float32 evaluates in
// float64 lanes and keeps a lane only when its rounding is certain to be
// the reference's (a zero may differ in sign), handing the rest back to
// the reference. The environment variable GELU_KERNELS=generic forces the
// portable loops; KernelsName reports which run.

import (
	"fmt"
	"unsafe"
)

// Float is the set of element types the kernels support.
type Float interface{ ~float32 | ~float64 }

// Forward sets dst[i] = f(x[i]). dst and x may be the same slice.
func Forward[T Float](a Activation, dst, x []T) error {
	if err := checkKernel(a, "Forward", len(dst), len(x), len(x)); err != nil {
		return err
	}
	forward(a, dst, x)
	return nil
}

// Backward sets dst[i] = g[i]·f'(x[i]), the vector-Jacobian product. dst may
// alias x or g.
func Backward[T Float](a Activation, dst, x, g []T) error {
	if err := checkKernel(a, "Backward", len(dst), len(x), len(g)); err != nil {
		return err
	}
	derivative(a, 1, dst, x, g, false)
	return nil
}

// Backward2 sets dst[i] = g[i]·f”(x[i]), the derivative of Backward with
// respect to x. dst may alias x or g.
func Backward2[T Float](a Activation, dst, x, g []T) error {
	if err := checkKernel(a, "Backward2", len(dst), len(x), len(g)); err != nil {
		return err
	}
	derivative(a, 2, dst, x, g, false)
	return nil
}

func checkKernel(a Activation, kernel string, dst, x, g int) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if dst != x || g != x {
		return fmt.Errorf("ops.%s(%s): slice lengths differ: dst %d, x %d, g %d", kernel, a, dst, x, g)
	}
	return nil
}

// forward is Forward without checks.
func forward[T Float](a Activation, dst, x []T) {
	run(a, 0, dst, x, nil, false)
}

// derivative sets (or, with add, accumulates into) dst[i] the product
// g[i]·f^(order)(x[i]), without checks.
func derivative[T Float](a Activation, order int, dst, x, g []T, add bool) {
	run(a, order, dst, x, g, add)
}

// asmID names an assembly kernel (kernels_amd64.go); 0 is none. A number
// rather than a func value, so that the call is direct and its arguments
// stay on the stack.
type asmID uint8

// chunkKernel computes one contiguous chunk: dst = f(x) for order 0, else
// dst = g·f^(order)(x) or, with add, dst += g·f^(order)(x). In each product
// g·f is rounded once to the element type, as T(float64(g)·f(float64(x))).
// It is a value, copied into the per-core closure, so a call allocates only
// that closure.
type chunkKernel[T Float] struct {
	asm   asmID      // 0: the portable loops
	p     [8]float64 // the assembly kernel's parameters
	a     Activation
	order int
}

func (k chunkKernel[T]) run(dst, x, g []T, add bool) {
	if k.asm != 0 {
		k.runAsm(dst, x, g, add)
		return
	}
	scalarChunk(k.a, k.order, dst, x, g, add)
}

// run picks the kernel for a and order and runs it on every core. Types
// defined over float32 or float64 share their memory layout, so they are
// viewed as the basic type.
func run[T Float](a Activation, order int, dst, x, g []T, add bool) {
	if unsafe.Sizeof(T(0)) == 4 {
		k := chunkKernel[float32]{a: a, order: order}
		simd32(&k)
		runOn(k, as[float32](dst), as[float32](x), as[float32](g), add)
		return
	}
	k := chunkKernel[float64]{a: a, order: order}
	simd64(&k)
	runOn(k, as[float64](dst), as[float64](x), as[float64](g), add)
}

func as[E, T Float](s []T) []E {
	if s == nil {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func runOn[T Float](k chunkKernel[T], dst, x, g []T, add bool) {
	parallelFor(len(x), func(lo, hi int) {
		var gc []T
		if g != nil {
			gc = g[lo:hi]
		}
		k.run(dst[lo:hi], x[lo:hi], gc, add)
	})
}
