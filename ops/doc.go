// Package ops holds the custom gorgonia operations of this project: the GELU
// family (exact x·Φ(x), the tanh and the sigmoid approximations) and the
// activations they are compared with (ReLU, Softplus, SiLU/Swish, ELU and the
// sigmoid-gated unit x·σ(βx)).
//
// Every activation is a value of type Activation with
//
//   - a float64 scalar reference F, Deriv, Deriv2 (f, f', f”) that works
//     without a graph and is accurate to a few ulp everywhere, including the
//     far negative tail, the subnormal range and ±Inf (see the accuracy test
//     and its mpmath fixture in testdata/);
//   - slice kernels Forward, Backward, Backward2 for float32 and float64;
//   - a gorgonia op (Apply) with a hand-written backward (ApplyGrad) that is
//     itself differentiable, so double backward works with the tape machine
//     (via graph.Grad) and with the LispMachine (DoDiff).
//
// Minimal use:
//
//	g, _ := graph.New(tensor.Float32, 1)
//	x, _ := g.Input("x", 32, 128)
//	y, err := ops.GELU.Apply(x) // or ops.GELUTanh, ops.ReLU, ops.SigmoidGated(1.5), ...
//
// Choose an activation by name with ParseActivation("gelu_tanh"); analyse
// one with Minimum, Roots and MaxAbsDiff.
package ops
