package analysis_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
)

// GELU's minimum and its mean under a unit Gaussian input, which Stein's
// lemma gives in closed form: E[X·Φ(X)] = E[φ(X)] = 1/(2√π). The body is
// the package documentation's sketch.
func Example() {
	p, err := analysis.ProfileOf(activation.GELU)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("minimum %.4f at x = %.4f\n", p.MinF, p.MinX)
	e, err := analysis.NormalExpectation(activation.GELU.F) // E[GELU(X)], X ~ N(0, 1), with an error bound
	fmt.Printf("E[GELU(X)] = %.10f, 1/(2√π) = %.10f, %v\n", e.Value, 1/(2*math.Sqrt(math.Pi)), err)
	// Output:
	// minimum -0.1700 at x = -0.7518
	// E[GELU(X)] = 0.2820947918, 1/(2√π) = 0.2820947918, <nil>
}
