package optim

import (
	"math"
	"testing"
)

// allFinite agrees with math.IsNaN/IsInf on every class of value,
// including the largest finite numbers and subnormals.
func TestAllFinite(t *testing.T) {
	cases64 := []float64{0, math.Copysign(0, -1), 1, -1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, v := range cases64 {
		want := !math.IsNaN(v) && !math.IsInf(v, 0)
		x := []float64{1, 2, v, 3}
		if got := allFinite(x); got != want {
			t.Errorf("float64 %v: allFinite = %v, want %v", v, got, want)
		}
		f := float32(v)
		want32 := !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0)
		if got := allFinite([]float32{1, f, 2}); got != want32 {
			t.Errorf("float32 %v: allFinite = %v, want %v", f, got, want32)
		}
	}
	if !allFinite([]float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32}) || !allFinite([]float64(nil)) {
		t.Error("finite extremes or an empty slice reported non-finite")
	}
}
