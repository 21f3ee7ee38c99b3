package activation_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
)

// TestBackwarderMatchesBackward: Backwarder, on slices starting and ending
// anywhere (as a GEMM's strips do), gives Backward's results bit for bit,
// for every activation, in both float types.
func TestBackwarderMatchesBackward(t *testing.T) {
	const n = 3000
	r := rng.New(9, "backwarder")
	x64, g64 := make([]float64, n), make([]float64, n)
	for i := range x64 {
		x64[i] = 6 * r.Normal()
		g64[i] = r.Normal()
	}
	x64[5], x64[6], x64[7] = math.NaN(), math.Inf(1), -40 // lanes the kernels hand back
	for _, a := range activation.All() {
		t.Run(a.Name(), func(t *testing.T) {
			backwarderCheck(t, a, x64, g64)
			x32, g32 := make([]float32, n), make([]float32, n)
			for i := range x64 {
				x32[i], g32[i] = float32(x64[i]), float32(g64[i])
			}
			backwarderCheck(t, a, x32, g32)
		})
	}
}

func backwarderCheck[T float32 | float64](t *testing.T, a activation.Activation, x, g []T) {
	t.Helper()
	want := make([]T, len(x))
	if err := activation.Backward(a, want, x, g); err != nil {
		t.Fatal(err)
	}
	var b activation.Backwarder[T]
	b.Reset(a)
	got := append([]T(nil), g...) // in place, as the GEMM's epilogue runs it
	for lo := 0; lo < len(x); {
		hi := min(len(x), lo+1+(lo*7)%301)
		b.Backward(got[lo:hi], x[lo:hi], got[lo:hi])
		lo = hi
	}
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) || math.Signbit(float64(got[i])) != math.Signbit(float64(want[i])) {
			t.Fatalf("%T: element %d (x = %v): %v, want %v", got[i], i, x[i], got[i], want[i])
		}
	}
}
