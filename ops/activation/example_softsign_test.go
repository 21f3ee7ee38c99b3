package activation_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// An activation of your own in a few lines: Softsign, x/(1 + |x|)
// (PyTorch's nn.Softsign), whose derivatives are short closed forms
// (they lose accuracy only where they fall into the subnormal range, for
// |x| beyond 1e102); f” jumps at 0, a breakpoint. Once
// registered, ParseActivation and the examples' -acts flags know it, and
// it runs in the slice kernels and in a graph like a built-in activation.
// The body is the package documentation's sketch; ExampleNew does the
// same for Mish, whose formulas take more care.
func ExampleNew_softsign() {
	softsign, err := activation.New(activation.Def{Name: "softsign", Title: "Softsign",
		F:           func(x float64) float64 { return x / (1 + math.Abs(x)) },
		D1:          func(x float64) float64 { return 1 / ((1 + math.Abs(x)) * (1 + math.Abs(x))) },
		D2:          func(x float64) float64 { return -2 * math.Copysign(1, x) / math.Pow(1+math.Abs(x), 3) },
		Breakpoints: []float64{0},
	}) // refused if D1 or D2 disagrees with finite differences
	if err == nil {
		err = activation.Register(softsign) // -acts relu,gelu,softsign
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := activation.ParseActivation("softsign")
	y := make([]float64, 3)
	activation.Forward(a, y, []float64{-1, 0, 3}) // the slice kernels, over the cores
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	node, err := a.Apply(x) // a graph op whose backward is differentiable again
	fmt.Println(a.Title(), y, node.Shape(), err)
	// Output:
	// Softsign [-0.5 0 0.75] (3) <nil>
}
