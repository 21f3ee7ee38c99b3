package fused_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"gorgonia.org/tensor"
)

// The package comment's sketch: a fused Linear layer on a graph.
func Example() {
	g, _ := graph.New(tensor.Float32, 1)
	x, _ := g.Input("x", 64, 784)
	w, _ := g.Param("w", graph.KaimingUniform(math.Sqrt(1.0/3)), 128, 784) // out × in: PyTorch's nn.Linear init
	b, _ := g.Param("b", graph.Zeros(), 128)
	h, err := fused.Linear(x, w, b) // x·wᵀ + b
	fmt.Println(h.Shape(), err)
	// Output: (64, 128) <nil>
}
