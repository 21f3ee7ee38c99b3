package activation

import "github.com/geluproject/gelu/ops/simd"

// row is everything the package knows about one activation.
type row struct {
	name  string // Name and ParseActivation: "gelu"
	alias string // another name ParseActivation accepts ("swish"), or ""
	// title is the label for tables and legends, given the parameter.
	title func(p float64) string
	// param is the parameter's symbol ("α", "β"), or "" for none.
	param        string
	defaultParam dd
	// nameShowsParam makes Name show the parameter even at its default
	// (sigmoid_gated:β), where the name alone would not say which unit.
	nameShowsParam bool

	// ref is the float64 scalar reference: f, f' and f”, accurate to a
	// few ulp everywhere; the kernels must agree with it.
	ref [3]func(x float64, p dd) float64
	// breakpoints are where f, f' or f” is not smooth.
	breakpoints []float64
	// checkRange is where CheckDerivatives compares with finite
	// differences; the zero value (the built-in rows') is the whole line.
	checkRange [2]float64

	// simd32 and simd64 pick the assembly kernel for a derivative order
	// and fill in its parameters, or return simd.None. Nil: none exists.
	simd32, simd64 func(order int, p dd, k *[8]float64) simd.ID
	// lane32 is simd32 for the float32-lane kernels (within 1 ulp, not
	// always correctly rounded), run on the avx512 and avx2 paths. Nil:
	// none exists (avx512 then runs simd32, avx2 the portable loop).
	lane32 func(order int, p dd, k *[8]float64) simd.ID
	// loop32 and loop64 replace the portable per-element loop (ReLU's is
	// branch-free). Nil: the generic loop over ref.
	loop32 func(order int, dst, x, g []float32, add bool)
	loop64 func(order int, dst, x, g []float64, add bool)

	// id is nonzero for a row defined by a user (New, NewParam): it tells
	// apart, in the graph op's hash, two definitions under one name.
	// The kernels recover a panic in such a row's functions.
	id uint64
	// validParam reports whether a parameter value is usable. Nil: a
	// finite value > 0 (the built-in rows' α and β).
	validParam func(p float64) error
}

// noParam turns three parameter-free functions into a row's ref.
func noParam(f, d1, d2 func(float64) float64) [3]func(float64, dd) float64 {
	return [3]func(float64, dd) float64{
		func(x float64, _ dd) float64 { return f(x) },
		func(x float64, _ dd) float64 { return d1(x) },
		func(x float64, _ dd) float64 { return d2(x) },
	}
}

// fixedTitle is a title that ignores the parameter.
func fixedTitle(t string) func(float64) string { return func(float64) string { return t } }
