// Package optest holds the helpers the op packages' tests share.
package optest

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dtypes are the element types every op is tested in.
func Dtypes() []tensor.Dtype { return []tensor.Dtype{tensor.Float32, tensor.Float64} }

// Floats returns a float32 or float64 tensor's data as float64.
func Floats(t testing.TB, v G.Value) []float64 {
	t.Helper()
	d, ok := v.(*tensor.Dense)
	if !ok {
		t.Fatalf("value is a %T, want a *tensor.Dense", v)
	}
	switch d := d.Data().(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	case []float64:
		return d
	}
	t.Fatalf("unexpected data %T", d.Data())
	return nil
}
