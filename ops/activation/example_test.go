package activation_test

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Build y = Σ GELU(x) and take its gradient, which is GELU'(x).
func ExampleActivation_Apply() {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	y, _ := activation.GELU.Apply(x)
	loss, _ := G.Sum(y)

	m, _ := g.Compile(loss, graph.WithRespectTo(x))
	m.Set(x, tensor.New(tensor.WithBacking([]float64{-1, 0, 1})))
	if err := m.Run(); err != nil {
		fmt.Println(err)
		return
	}
	l, _ := m.Loss()
	dx, _ := m.Grad(x)
	fmt.Printf("loss %.4f\ngrad %.4f\n", l, dx.Float64s())
	// Output:
	// loss 0.6827
	// grad [-0.0833 0.5000 1.0833]
}

// The scalar references work without a graph.
func ExampleActivation_Deriv() {
	fmt.Printf("GELU(-1) = %.4f, GELU'(-1) = %.4f, GELU''(0) = %.4f\n",
		activation.GELU.F(-1), activation.GELU.Deriv(-1), activation.GELU.Deriv2(0))
	// Output: GELU(-1) = -0.1587, GELU'(-1) = -0.0833, GELU''(0) = 0.7979
}
