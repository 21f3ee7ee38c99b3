package gemm_test

import (
	"fmt"

	"github.com/geluproject/gelu/ops/gemm"
)

// C = A·Bᵀ with A and B rounded to bfloat16 and the products summed in
// float32: 0.1, 0.2 and 0.3 become 0.10009765625, 0.2001953125 and
// 0.30078125, so the second column is not 1.4 and 3.2.
func ExampleGemmBF16() {
	a := []float32{1, 2, 3, 4, 5, 6}       // 2×3
	b := []float32{1, 0, 1, 0.1, 0.2, 0.3} // 2×3: Bᵀ is 3×2
	c := make([]float32, 4)
	if err := gemm.GemmBF16(false, true, 2, 2, 3, 1, a, 3, b, 3, 0, c, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c)
	// Output: [4 1.402832 10 3.2060547]
}

// A bfloat16 keeps a float32's sign and exponent and 7 fraction bits.
func ExampleToBF16() {
	x := gemm.ToBF16(3.14159)
	fmt.Printf("%#04x %v\n", uint16(x), x.Float32())
	// Output: 0x4049 3.140625
}
