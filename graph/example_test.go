package graph_test

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
)

// Second derivatives: Grad applied to a gradient. For loss = Σ GELU(x),
// ∂loss/∂x = GELU'(x), and the gradient of Σ GELU'(x) is GELU”(x) =
// (2 − x²)·φ(x): 2φ(0) = 0.7979 at 0, φ(1) = 0.2420 at ±1, −2φ(2) = −0.1080 at 2.
func ExampleGraph_Grad() {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 4)
	y, _ := activation.GELU.Apply(x)
	loss, _ := gorgonia.Sum(y)
	dx, _ := g.Grad(loss, x) // GELU'(x)
	s, _ := gorgonia.Sum(dx[0])
	m, _ := g.Compile(s, graph.WithRespectTo(x))
	defer m.Close()
	m.Set(x, tensor.New(tensor.WithBacking([]float64{-1, 0, 1, 2})))
	m.Run()
	d2, _ := m.Grad(x)
	fmt.Printf("%.4f\n", d2.Data())
	// Output: [0.2420 0.7979 0.2420 -0.1080]
}

// The gradient checker compares a graph's analytic gradients, parameters
// included, with central differences in float64.
func ExampleCheckGrad() {
	layer := func(g *graph.Graph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		w, err := g.Param("fc.weight", graph.XavierUniform(1), 3, 4)
		if err != nil {
			return nil, err
		}
		wt, err := gorgonia.Transpose(w)
		if err != nil {
			return nil, err
		}
		h, err := gorgonia.Mul(in[0], wt)
		if err != nil {
			return nil, err
		}
		return activation.GELUTanh.Apply(h)
	}
	x := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{0.5, -1, 2, 0, 1.5, -0.3, 0.1, -2}))
	res, err := graph.CheckGrad(layer, []*tensor.Dense{x}, graph.GradCheck{})
	fmt.Println(res.OK, err, res.Checked)
	// Output: true <nil> 20
}

// Token ids go in as ints; SetIDs converts them once into the input's
// dtype and refuses what float32 cannot hold exactly.
func ExampleMachine_SetIDs() {
	g, _ := graph.New(tensor.Float32, 1)
	ids, _ := g.Input("ids", 2, 3)
	m, _ := g.Compile(nil, graph.Keep(ids))
	fmt.Println(m.SetIDs(ids, []int{5, 0, 7, 1, 2, 3}))
	v, _ := m.Value(ids)
	fmt.Println(v.(*tensor.Dense).Float32s())
	fmt.Println(m.SetIDs(ids, []int{5, 0, 1 << 24, 1, 2, 3}))
	// Output:
	// <nil>
	// [5 0 7 1 2 3]
	// graph: SetIDs "ids": id 16777216 at position 2 is not exactly representable in float32 (|id| must be below 16777216)
}
