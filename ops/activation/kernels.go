package activation

// Slice kernels: the activation applied elementwise to whole tensors, split
// across cores (package parallel).
//
// The portable loops (kernels_scalar.go) compute the float64 scalar
// reference F, Deriv, Deriv2, times g, rounded once to the element type;
// a user-defined activation (New) always runs them. On
// amd64 CPUs with AVX-512 the GELU family (exact, tanh, sigmoid, SiLU,
// sigmoid-gated), and ELU in float32, run in generated assembly (package
// simd). Which assembly is the path simd.Current (environment variable
// GELU_KERNELS, see package simd):
//
//   - avx512 (the default with AVX-512): as exact32, except that float32
//     GELU (exact, tanh and sigmoid forms) and SiLU run in float32 lanes,
//     each result within 1 ulp of the true value (the reference rounded or
//     a neighbour; cmd/gelu32proof checks all 2^32 inputs).
//   - exact32 (the reference): results equal the portable loops'. float64
//     repeats the reference's operations bit for bit; float32 evaluates in
//     float64 lanes and keeps a lane only when its rounding is certain to
//     be the reference's (a zero may differ in sign), handing the rest back.
//   - avx2 (the default with AVX2 and FMA but no AVX-512): those in
//     float32 lanes as avx512 but 8 per register (exact GELU with tables of
//     its own, so its results may differ from avx512's by an ulp);
//     everything else portable.
//   - generic: portable loops only.
//
// Each path is deterministic: every lane is computed on its own, so the
// result does not depend on the number of cores or where chunks start.
//
// KernelsName reports which run.

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/parallel"
	"github.com/geluproject/gelu/ops/simd"
)

// Forward sets dst[i] = f(x[i]). dst and x may be the same slice.
func Forward[T graph.Float](a Activation, dst, x []T) error {
	if err := checkKernel(a, "Forward", len(dst), len(x), len(x)); err != nil {
		return err
	}
	return forward(a, dst, x)
}

// Backward sets dst[i] = g[i]·f'(x[i]), the vector-Jacobian product. dst may
// alias x or g.
func Backward[T graph.Float](a Activation, dst, x, g []T) error {
	if err := checkKernel(a, "Backward", len(dst), len(x), len(g)); err != nil {
		return err
	}
	return derivative(a, 1, dst, x, g, false)
}

// Backward2 sets dst[i] = g[i]·f”(x[i]), the derivative of Backward with
// respect to x. dst may alias x or g.
func Backward2[T graph.Float](a Activation, dst, x, g []T) error {
	if err := checkKernel(a, "Backward2", len(dst), len(x), len(g)); err != nil {
		return err
	}
	return derivative(a, 2, dst, x, g, false)
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

// forward is Forward without checks. Its error is a user-defined
// function's panic (see run).
func forward[T graph.Float](a Activation, dst, x []T) error {
	return run(a, 0, dst, x, nil, false)
}

// derivative sets (or, with add, accumulates into) dst[i] the product
// g[i]·f^(order)(x[i]), without checks.
func derivative[T graph.Float](a Activation, order int, dst, x, g []T, add bool) error {
	return run(a, order, dst, x, g, add)
}

// chunkKernel computes one contiguous chunk: dst = f(x) for order 0, else
// dst = g·f^(order)(x) or, with add, dst += g·f^(order)(x). In each product
// g·f is rounded once to the element type, as T(float64(g)·f(float64(x))).
// loop holds one for the cores to share.
type chunkKernel[T graph.Float] struct {
	id    simd.ID    // simd.None: the portable loops
	p     [8]float64 // the assembly kernel's parameters
	a     Activation
	order int
}

func (k chunkKernel[T]) run(dst, x, g []T, add bool) {
	if k.id != simd.None {
		k.runSIMD(dst, x, g, add)
		return
	}
	portableChunk(k.a, k.order, dst, x, g, add)
}

// run picks the kernel for a and order and runs it on every core. Types
// defined over float32 or float64 share their memory layout, so they are
// viewed as the basic type. A user-defined activation's functions run on
// the parallel package's workers, where a panic would end the program: it
// is recovered and returned as the error.
func run[T graph.Float](a Activation, order int, dst, x, g []T, add bool) error {
	r := a.row
	if unsafe.Sizeof(T(0)) == 4 {
		l := loops32.Get()
		l.k = chunkKernel[float32]{a: a, order: order}
		if simd.Available {
			path := simd.Current
			if (path == simd.AVX512 || path == simd.AVX2) && r.lane32 != nil {
				l.k.id = r.lane32(order, a.param, &l.k.p)
			}
			if l.k.id == simd.None && path.Has512() && r.simd32 != nil {
				l.k.id = r.simd32(order, a.param, &l.k.p)
			}
		}
		err := l.runOn(as[float32](dst), as[float32](x), as[float32](g), add)
		loops32.Put(l)
		return err
	}
	l := loops64.Get()
	l.k = chunkKernel[float64]{a: a, order: order}
	if simd.Available && simd.Current.Has512() && exact64 && r.simd64 != nil {
		l.k.id = r.simd64(order, a.param, &l.k.p)
	}
	err := l.runOn(as[float64](dst), as[float64](x), as[float64](g), add)
	loops64.Put(l)
	return err
}

func as[E, T graph.Float](s []T) []E {
	if s == nil {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// loop is the body parallel.For runs over the chunks: the kernel and its
// operands. It is pooled, because a closure handed to parallel.For, or a
// kernel whose parameters the selectors write through a pointer, would be
// allocated on every call (several per training step).
type loop[T graph.Float] struct {
	k         chunkKernel[T]
	dst, x, g []T
	add       bool
	// panicked holds the first panic of a user-defined function.
	panicked atomic.Pointer[error]
}

var (
	// Free lists, not sync.Pools: a garbage collection empties a pool, and
	// the next training step would allocate its loops again.
	loops32 parallel.FreeList[loop[float32]]
	loops64 parallel.FreeList[loop[float64]]
)

func (l *loop[T]) runOn(dst, x, g []T, add bool) error {
	l.dst, l.x, l.g, l.add = dst, x, g, add
	parallel.For(len(x), parallel.MinGrain, l)
	var err error
	if p := l.panicked.Load(); p != nil {
		err = *p
	}
	l.k, l.dst, l.x, l.g = chunkKernel[T]{}, nil, nil, nil // keep no slice alive in the pool
	l.panicked.Store(nil)
	return err
}

func (l *loop[T]) Run(lo, hi int) {
	if l.k.a.row.id != 0 {
		defer l.recoverPanic(lo, hi)
	}
	var gc []T
	if l.g != nil {
		gc = l.g[lo:hi]
	}
	l.k.run(l.dst[lo:hi], l.x[lo:hi], gc, l.add)
}

// recoverPanic records a panic of a user-defined function in the chunk
// [lo, hi) as the loop's error.
func (l *loop[T]) recoverPanic(lo, hi int) {
	if r := recover(); r != nil {
		err := fmt.Errorf("ops.%s: %s panicked on an element of [%d, %d): %v", l.k.a, orderName[l.k.order], lo, hi, r)
		l.panicked.CompareAndSwap(nil, &err)
	}
}

// runSIMD runs the assembly kernel on blocks of the chunk and fills in the
// lanes it hands back with the scalar reference: the float64 kernels hand
// back those outside the range where they repeat the reference (|x| > 37
// for GELU, say), the float32 ones those whose rounding they cannot be
// sure of, the float32-lane ones those outside their range (x < −13 for
// GELU, NaN; the gated ones also a window around the roots of f' and f”).
// Results are therefore the same, bit for bit, as the portable
// loops', but for the float32-lane kernels (within 1 ulp).
func (k chunkKernel[T]) runSIMD(dst, x, g []T, add bool) {
	var exc simd.Bitmap
	for lo := 0; lo < len(x); lo += simd.Block {
		hi := min(lo+simd.Block, len(x))
		var gb []T
		if g != nil {
			gb = g[lo:hi]
		}
		var marked bool
		if k.id.Float64() {
			marked = simd.Call64(k.id, as[float64](dst[lo:hi]), as[float64](x[lo:hi]), as[float64](gb), add, &k.p, &exc)
		} else {
			marked = simd.Call32(k.id, as[float32](dst[lo:hi]), as[float32](x[lo:hi]), as[float32](gb), add, &k.p, &exc)
		}
		if marked {
			fixExceptions(k.a.Derivative(k.order), k.order, dst[lo:hi], x[lo:hi], gb, add, exc[:])
		}
	}
}

// fixExceptions computes, with the scalar reference, the elements whose bit
// is set in exc; the assembly left them untouched, so x and g still hold
// their inputs even when dst aliases them.
func fixExceptions[T graph.Float](f func(float64) float64, order int, dst, x, g []T, add bool, exc []uint8) {
	for b, m := range exc[:(len(x)+7)/8] {
		for ; m != 0; m &= m - 1 {
			i := 8*b + bits.TrailingZeros8(m)
			v := f(float64(x[i]))
			if order > 0 {
				v = float64(g[i]) * v
			}
			if add {
				dst[i] += T(v)
			} else {
				dst[i] = T(v)
			}
		}
	}
}

// KernelsName says which kernels the activations use, e.g. "AVX-512".
func KernelsName() string {
	switch {
	case !simd.Available:
		return "portable Go"
	case simd.Current == simd.AVX2:
		return "AVX2 float32 lanes for GELU, its tanh and sigmoid forms and SiLU in float32 (within 1 ulp); the rest portable Go"
	}
	name := "AVX-512"
	if simd.Current == simd.AVX512 {
		name += ", float32 lanes for GELU, its tanh and sigmoid forms and SiLU in float32 (within 1 ulp)"
	}
	if !exact64 {
		name += "; float64: portable Go, as GOAMD64=v3 fuses multiply-adds"
	}
	return name
}
