package rng_test

import (
	"fmt"

	"github.com/geluproject/gelu/graph/rng"
)

// A stream is a pure function of its seed and name.
func Example() {
	r := rng.New(42, "fc1.weight")
	w := r.Normal() * 0.02
	fmt.Println(w == rng.New(42, "fc1.weight").Normal()*0.02) // the same stream, the same numbers
	// Output: true
}
