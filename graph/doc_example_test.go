package graph_test

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The package comment's sketch: a Linear layer, GELU and gorgonia.Mean as
// the loss, compiled and run; the weight's gradient has the weight's shape.
func Example() {
	g, _ := graph.New(tensor.Float64, 42)
	x, _ := g.Input("x", 2, 4)
	w, _ := g.Param("fc.weight", graph.XavierUniform(1), 3, 4)
	wt, _ := gorgonia.Transpose(w)
	h, _ := gorgonia.Mul(x, wt)
	y, _ := activation.GELU.Apply(h)
	loss, _ := gorgonia.Mean(y)
	m, err := g.Compile(loss)
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Set(x, tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{0.5, -1, 2, 0, 1.5, -0.3, 0.1, -2})))
	m.Run()
	dw, _ := m.Grad(w)
	fmt.Println(dw.Shape())
	// Output: (3, 4)
}
