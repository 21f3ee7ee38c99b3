package simd_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/simd"
)

// The exact GELU in float32 by the AVX-512 kernel where the path has it,
// the lanes it leaves (here +Inf, outside its range) and every lane
// without it computed by a float64 reference: the result is the same on
// every path. Package activation does this for every call. The body is the
// package documentation's sketch.
func ExampleCall32() {
	x := []float32{-20, -1, 0, 0.5, 3, float32(math.Inf(1))}
	dst := make([]float32, len(x))
	var p [8]float64 // constants some kernels take; GELU32D0 takes none
	var exc simd.Bitmap
	asm := simd.Current.Has512() // GELU32D0 is an AVX-512 kernel: not on the avx2 path
	marked := asm && simd.Call32(simd.GELU32D0, dst, x, nil, false, &p, &exc)
	for i, v := range x {
		if !asm || marked && exc[i/8]>>(i%8)&1 != 0 { // a lane the kernel left to the reference
			dst[i] = float32(float64(v) * 0.5 * math.Erfc(-float64(v)/math.Sqrt2))
		}
	}
	fmt.Println(dst)
	// Output: [-0 -0.15865526 0 0.34573123 2.9959502 +Inf]
}
