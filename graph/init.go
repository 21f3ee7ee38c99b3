package graph

// Parameter initializers, named after PyTorch's torch.nn.init. Weights are
// laid out as PyTorch's (out_features, in_features), so fan_in is the
// product of all dimensions but the first and fan_out of all but the second.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph/rng"
)

// Init fills a new parameter's values. dst holds one entry per element in
// row-major order; r is the parameter's own random stream. The initializers
// of this package return an error, not a panic, when len(dst) does not match
// shape or r is nil.
type Init interface {
	Fill(dst []float64, shape []int, r *rng.RNG) error
}

// InitFunc adapts a function to Init.
type InitFunc func(dst []float64, shape []int, r *rng.RNG) error

// Fill calls f.
func (f InitFunc) Fill(dst []float64, shape []int, r *rng.RNG) error { return f(dst, shape, r) }

// Zeros fills with 0.
func Zeros() Init { return Constant(0) }

// Constant fills with v.
func Constant(v float64) Init {
	return builtin("Constant", false, func(dst []float64, _ []int, _ *rng.RNG) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("Constant(%v): value is not finite", v)
		}
		for i := range dst {
			dst[i] = v
		}
		return nil
	})
}

// Normal fills with samples from N(mean, std²).
func Normal(mean, std float64) Init {
	return builtin("Normal", true, func(dst []float64, _ []int, r *rng.RNG) error {
		if !finite(mean) || !finite(std) || std < 0 {
			return fmt.Errorf("Normal(%v, %v): want a finite mean and std ≥ 0", mean, std)
		}
		for i := range dst {
			dst[i] = mean + std*r.Normal()
		}
		return nil
	})
}

// Uniform fills with samples from U[lo, hi).
func Uniform(lo, hi float64) Init {
	return builtin("Uniform", true, func(dst []float64, _ []int, r *rng.RNG) error {
		if !finite(lo) || !finite(hi) || hi < lo {
			return fmt.Errorf("Uniform(%v, %v): want finite lo ≤ hi", lo, hi)
		}
		for i := range dst {
			dst[i] = r.Uniform(lo, hi)
		}
		return nil
	})
}

// XavierUniform is Glorot's U(−a, a) with a = gain·√(6/(fan_in+fan_out)).
func XavierUniform(gain float64) Init {
	return builtin("XavierUniform", true, func(dst []float64, shape []int, r *rng.RNG) error {
		in, out, err := fans("XavierUniform", shape)
		if err != nil {
			return err
		}
		a := gain * math.Sqrt(6/float64(in+out))
		return Uniform(-a, a).Fill(dst, shape, r)
	})
}

// XavierNormal is Glorot's N(0, std²) with std = gain·√(2/(fan_in+fan_out)).
func XavierNormal(gain float64) Init {
	return builtin("XavierNormal", true, func(dst []float64, shape []int, r *rng.RNG) error {
		in, out, err := fans("XavierNormal", shape)
		if err != nil {
			return err
		}
		return Normal(0, gain*math.Sqrt(2/float64(in+out))).Fill(dst, shape, r)
	})
}

// KaimingNormal is He's N(0, std²) with std = gain/√fan_in; gain √2 suits
// ReLU, and PyTorch's default for leaky_relu(0) is the same.
func KaimingNormal(gain float64) Init {
	return builtin("KaimingNormal", true, func(dst []float64, shape []int, r *rng.RNG) error {
		in, _, err := fans("KaimingNormal", shape)
		if err != nil {
			return err
		}
		return Normal(0, gain/math.Sqrt(float64(in))).Fill(dst, shape, r)
	})
}

// KaimingUniform is He's U(−a, a) with a = gain·√(3/fan_in). With gain
// √(1/3) it is PyTorch's default nn.Linear weight init, U(±1/√fan_in).
func KaimingUniform(gain float64) Init {
	return builtin("KaimingUniform", true, func(dst []float64, shape []int, r *rng.RNG) error {
		in, _, err := fans("KaimingUniform", shape)
		if err != nil {
			return err
		}
		a := gain * math.Sqrt(3/float64(in))
		return Uniform(-a, a).Fill(dst, shape, r)
	})
}

// UnitNormRows fills every row (index along the first dimension) with a
// random direction: a standard normal vector scaled to unit Euclidean norm.
// Hendrycks & Gimpel initialize their MNIST networks this way.
func UnitNormRows() Init {
	return builtin("UnitNormRows", true, func(dst []float64, shape []int, r *rng.RNG) error {
		if len(shape) < 2 {
			return fmt.Errorf("UnitNormRows: shape %v, want at least 2 dimensions", shape)
		}
		cols := len(dst) / shape[0]
		for row := 0; row < shape[0]; row++ {
			v := dst[row*cols : (row+1)*cols]
			var ss float64
			for i := range v {
				v[i] = r.Normal()
				ss += v[i] * v[i]
			}
			norm := math.Sqrt(ss)
			for i := range v {
				v[i] /= norm
			}
		}
		return nil
	})
}

// builtin wraps the initializers of this file, which may be called
// directly, with the checks they rely on: len(dst) is the number of elements
// of a shape of positive dimensions, and a random stream is given to those
// that draw.
func builtin(name string, draws bool, fill InitFunc) Init {
	return InitFunc(func(dst []float64, shape []int, r *rng.RNG) error {
		n, ok := product(shape)
		if !ok {
			return fmt.Errorf("%s: shape %v, want dimensions ≥ 1 whose product fits an int", name, shape)
		}
		if n != len(dst) {
			return fmt.Errorf("%s: %d values for shape %v of %d elements", name, len(dst), shape, n)
		}
		if draws && r == nil {
			return fmt.Errorf("%s: nil random stream", name)
		}
		return fill(dst, shape, r)
	})
}

// fans returns fan_in and fan_out of a weight shaped (out, in, k...).
func fans(name string, shape []int) (in, out int, err error) {
	if len(shape) < 2 {
		return 0, 0, fmt.Errorf("%s: shape %v, want at least 2 dimensions (out, in, ...)", name, shape)
	}
	receptive := 1
	for _, d := range shape[2:] {
		receptive *= d
	}
	return shape[1] * receptive, shape[0] * receptive, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
