package parallel_test

import (
	"fmt"

	"github.com/geluproject/gelu/ops/parallel"
)

// An elementwise loop split over the cores in chunks of at least
// MinGrain elements. The body is the package documentation's sketch.
func ExampleElements() {
	x := make([]float64, 100_000)
	for i := range x {
		x[i] = float64(i)
	}
	y := make([]float64, len(x))
	parallel.Elements(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = 2 * x[i]
		}
	})
	fmt.Println(y[1], y[len(y)-1])
	// Output: 2 199998
}

// double is a loop body that a training step would keep and reuse: For
// takes a pointer to it, so a call allocates nothing.
type double struct{ x, y []float64 }

func (d *double) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		d.y[i] = 2 * d.x[i]
	}
}

// The same loop with a reusable body, as every step's loops run.
func ExampleFor() {
	d := &double{x: []float64{1, 2, 3}, y: make([]float64, 3)}
	parallel.For(len(d.x), parallel.MinGrain, d)
	fmt.Println(d.y)
	// Output: [2 4 6]
}
