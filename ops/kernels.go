package ops

// Slice kernels: the activation applied elementwise to whole tensors. float32
// inputs are evaluated through the float64 reference and rounded once, so
// they are within 1 ulp of the exact result (the accuracy test measures it).

import "fmt"

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
	f := a.derivative(0)
	parallelFor(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = T(f(float64(x[i])))
		}
	})
}

// derivative sets (or, with add, accumulates into) dst[i] the product
// g[i]·f^(order)(x[i]), without checks.
func derivative[T Float](a Activation, order int, dst, x, g []T, add bool) {
	f := a.derivative(order)
	parallelFor(len(x), func(lo, hi int) {
		if add {
			for i := lo; i < hi; i++ {
				dst[i] += T(float64(g[i]) * f(float64(x[i])))
			}
			return
		}
		for i := lo; i < hi; i++ {
			dst[i] = T(float64(g[i]) * f(float64(x[i])))
		}
	})
}
