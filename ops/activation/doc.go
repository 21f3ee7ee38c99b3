// Package activation is the GELU family (exact x·Φ(x), the tanh and the
// sigmoid approximations) and the activations it is compared with (ReLU,
// Softplus, SiLU/Swish, ELU and the sigmoid-gated unit x·σ(βx)).
//
// Each activation is one row of a table (row.go), declared in its own file
// beside its math (gelu.go, relu.go, ...): its name and title, its float64
// references f, f', f”, its breakpoints and which assembly kernels compute
// it. Every Activation value therefore has
//
//   - scalar references F, Deriv, Deriv2 that work without a graph and are
//     accurate to a few ulp everywhere, including the far negative tail, the
//     subnormal range and ±Inf (see the accuracy test and its mpmath fixture
//     in testdata/);
//   - slice kernels Forward, Backward, Backward2 for float32 and float64,
//     split over the cores, in assembly (package simd) where the CPU has
//     it and with the same results as the portable loops (on the avx512
//     and avx2 paths, float32 GELU within 1 ulp of them instead);
//   - a gorgonia op (Apply) with a hand-written backward (ApplyGrad) that is
//     itself differentiable, so double backward works with symbolic gradients
//     (via graph.Grad) and with the LispMachine (DoDiff).
//
// Minimal use: y = Σ GELU(x) and its gradient, GELU'(x)
// (ExampleActivation_Apply; GELUTanh, ReLU, SigmoidGated(1.5) and the
// others alike):
//
//	g, _ := graph.New(tensor.Float64, 1)
//	x, _ := g.Input("x", 3)
//	y, _ := activation.GELU.Apply(x)
//	loss, _ := G.Sum(y)
//
//	m, _ := g.Compile(loss, graph.WithRespectTo(x))
//	m.Set(x, tensor.New(tensor.WithBacking([]float64{-1, 0, 1})))
//	if err := m.Run(); err != nil {
//		fmt.Println(err)
//		return
//	}
//	l, _ := m.Loss()
//	dx, _ := m.Grad(x)
//	fmt.Printf("loss %.4f\ngrad %.4f\n", l, dx.Float64s())
//
// Choose one by name with ParseActivation("gelu_tanh"). Package analysis
// computes an activation's shape and Gaussian moments from the references.
//
// Your own activation is a row like the built-in ones: New takes its name,
// title, float64 references f, f', f” and breakpoints (NewParam a family
// with a parameter), checks f' and f” against finite differences of f and
// f' (CheckDerivatives; Def.CheckRange narrows where, for an f that varies
// too fast far out, such as sin; f, f' and f” must not be NaN anywhere),
// and returns an Activation that works wherever the built-in ones do:
// Apply with its double backward, the slice kernels
// (portable loops over the cores, float32 results rounded once from the
// float64 reference), package analysis; Register adds it to the names
// ParseActivation, and so the examples' -acts flags, accept. Softsign,
// x/(1 + |x|), whose derivatives are short closed forms
// (ExampleNew_softsign):
//
//	softsign, err := activation.New(activation.Def{Name: "softsign", Title: "Softsign",
//		F:           func(x float64) float64 { return x / (1 + math.Abs(x)) },
//		D1:          func(x float64) float64 { return 1 / ((1 + math.Abs(x)) * (1 + math.Abs(x))) },
//		D2:          func(x float64) float64 { return -2 * math.Copysign(1, x) / math.Pow(1+math.Abs(x), 3) },
//		Breakpoints: []float64{0},
//	}) // refused if D1 or D2 disagrees with finite differences
//	if err == nil {
//		err = activation.Register(softsign) // -acts relu,gelu,softsign
//	}
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	a, _ := activation.ParseActivation("softsign")
//	y := make([]float64, 3)
//	activation.Forward(a, y, []float64{-1, 0, 3}) // the slice kernels, over the cores
//	g, _ := graph.New(tensor.Float64, 1)
//	x, _ := g.Input("x", 3)
//	node, err := a.Apply(x) // a graph op whose backward is differentiable again
//	fmt.Println(a.Title(), y, node.Shape(), err)
//
// ExampleNew writes Mish's f, f', f” out to a few ulp everywhere (the tests
// check them against a 50-digit mpmath reference and PyTorch's F.mish).
//
// GELU_KERNELS selects the kernels: avx512 (the default on AVX-512 CPUs:
// float32 GELU, its tanh and sigmoid forms and SiLU in float32 lanes,
// within 1 ulp of the true value), avx2 (the same in AVX2 registers, the
// default on CPUs with AVX2 but not AVX-512), exact32 (float32 results
// correctly rounded, equal to the portable loops': the reference), or
// generic (the portable loops, as the noasm build tag); see package simd.
// KernelsName says which run. The command cmd/gelu32proof checks the
// float32-lane kernels on all 2^32 inputs.
package activation
