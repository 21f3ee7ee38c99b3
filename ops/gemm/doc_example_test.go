package gemm_test

import (
	"fmt"

	"github.com/geluproject/gelu/ops/gemm"
)

// The package comment's sketch: C = A·Bᵀ on whatever backend runs.
func Example() {
	m, n, k := 2, 3, 4
	a := []float32{1, 1, 1, 1, 2, 2, 2, 2}             // A: m×k, row-major
	b := []float32{1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1} // B: n×k
	c := make([]float32, m*n)
	err := gemm.Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n) // C = A·Bᵀ, m×n
	fmt.Println(c, err)
	// Output: [1 1 4 2 2 8] <nil>
}
