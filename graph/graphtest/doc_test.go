package graphtest_test

import (
	"slices"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// The package comment's sketch: a graph's output for one input.
func TestOutput(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	xNode, _ := g.Input("x", 2, 3)
	outNode, _ := activation.ReLU.Apply(xNode)
	x := graphtest.MustDense(tensor.Float32, []int{2, 3}, []float64{1, -2, 3, -4, 5, -6})
	got := graphtest.Output(t, g, xNode, outNode, x) // compile, set, run, read
	if want := []float64{1, 0, 3, 0, 5, 0}; !slices.Equal(got, want) {
		t.Errorf("ReLU(x) = %v, want %v", got, want)
	}
}
