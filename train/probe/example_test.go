package probe_test

import (
	"fmt"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// Counting dead units from pre-activations (rows = examples, columns =
// units), as a graph.Machine compiled with graph.Keep(mlp.Pre...) returns
// them.
func ExampleUnits() {
	pre := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{
		1.0, -0.5, -6,
		-2.0, -0.1, -5,
		0.5, -3.0, -4.5,
	}))
	for _, a := range []activation.Activation{activation.ReLU, activation.GELU} {
		u, _ := probe.NewUnits(a, 3)
		u.Observe(0, pre, 3)
		fmt.Printf("%s: dead at tol 0: %v, at tol 1e-3: %v\n", a, u.Dead(0, 0), u.Dead(0, probe.DefaultDeadTol))
	}
	// Output:
	// relu: dead at tol 0: [false true true], at tol 1e-3: [false true true]
	// gelu: dead at tol 0: [false false false], at tol 1e-3: [false false true]
}

// The stationary moments of a momentum buffer fed independent gradients.
func ExampleVarFactor() {
	for _, beta := range []float64{0.9, 0.99} {
		fmt.Printf("β = %v: EMA Var(m)/σ² = %.4f, heavy ball Var(m)/σ² = %.2f, heavy ball E[m]/μ = %.0f\n",
			beta, probe.VarFactor(probe.EMA, beta), probe.VarFactor(probe.HeavyBall, beta), probe.MeanFactor(probe.HeavyBall, beta))
	}
	// Output:
	// β = 0.9: EMA Var(m)/σ² = 0.0526, heavy ball Var(m)/σ² = 5.26, heavy ball E[m]/μ = 10
	// β = 0.99: EMA Var(m)/σ² = 0.0050, heavy ball Var(m)/σ² = 50.25, heavy ball E[m]/μ = 100
}
