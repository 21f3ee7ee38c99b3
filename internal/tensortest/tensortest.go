// Package tensortest builds the float32 and float64 tensors that tests of
// several packages (graph's users: nn, optim, train/probe) write as
// float64 numbers. Its functions panic on bad arguments: they are for
// tests, where a panic fails the test, and the library's own functions
// (graph.FromFloat64s, graph.SetFloat64s) return errors instead.
package tensortest

import (
	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Dense returns a tensor of dtype dt and shape holding vals (each rounded
// once for float32), as graph.FromFloat64s does.
func Dense(dt tensor.Dtype, shape []int, vals []float64) *tensor.Dense {
	t, err := graph.FromFloat64s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Set overwrites t's values with vals (each rounded once for float32), as
// graph.SetFloat64s does.
func Set(t *tensor.Dense, vals []float64) {
	if err := graph.SetFloat64s(t, vals); err != nil {
		panic(err)
	}
}
