// Package graph is the computation-graph layer on top of gorgonia: it owns
// the lifecycle that gorgonia leaves to its users.
//
//   - A Graph has a dtype and a seed. Inputs and parameters are created by
//     name; a parameter's initial value comes from an Init (Normal,
//     XavierUniform, KaimingNormal, UnitNormRows, ...) fed by a random stream
//     derived from the seed and the parameter's name, so it is the same on
//     any machine and does not change when other parameters are added.
//     NewTensor fills a plain tensor the same way (seeded data for
//     benchmarks and tests). Float64s reads a float32 or float64 tensor as
//     float64 numbers; FromFloat64s and SetFloat64s write them.
//   - Grad differentiates symbolically and can be applied to a gradient
//     again (Hessian-vector products), unlike gorgonia.Grad.
//   - Compile returns a Machine: Set binds inputs (checked for dtype, shape
//     and NaN; SetIDs binds integer ids), Run computes loss and gradients,
//     Loss/Grad/Value read them.
//     Gradients never accumulate across runs, so nothing needs zeroing;
//     a parameter that does not affect the loss gets a nil gradient (as
//     PyTorch leaves its .grad None), which the optimizers skip.
//     Randomness is keyed to the step: a Run in training mode (SetTraining)
//     draws its dropout masks for the graph's Step and then advances it, so
//     any loop gets a fresh mask every step, and the same seed and the
//     same sequence of Runs give the same masks; evaluation Runs neither
//     draw nor advance. SetStep sets the step (to resume a run).
//     The machine runs the ops itself, in gorgonia's tape order (the same
//     results), owns the values' buffers and reuses each after its last
//     use, and a training step's Run allocates nothing once the first
//     has made the buffers. Profile times each op of the runs that follow
//     and Profiled lists them, most time first (PyTorch's profiler table).
//   - CheckGrad and CheckGradGrad compare analytic first and second
//     derivatives of any graph with central finite differences.
//
// Nodes are plain *gorgonia.Node values, so gorgonia's ops can be mixed
// in: Grad differentiates every op that has a symbolic derivative
// (gorgonia.SDOp) and treats the inputs an op declares non-differentiable
// as constants, so the reductions users write as losses work as they do in
// PyTorch: gorgonia.Mean and gorgonia.Sum, over all axes or some, and
// gorgonia.Norm (TestReductionsAsLosses checks each against central
// differences). An op without a symbolic derivative on the path from a
// parameter to the loss is an error naming it. Gorgonia panics in many
// places; this package's API returns errors naming the node, shapes and
// dtypes instead.
//
// Hostile arguments get errors, not panics or runaway allocations: shapes
// whose size overflows, a nil node or machine, and tensors larger than
// MaxElements (2³⁰ elements by default, 2²⁶ on 32-bit platforms; a
// variable, raise it for larger models). Set copies a transposed or sliced
// view into a contiguous buffer in its logical order, since ops read the
// bound memory directly.
//
//	g, _ := graph.New(tensor.Float64, 42)
//	x, _ := g.Input("x", 2, 4)
//	w, _ := g.Param("fc.weight", graph.XavierUniform(1), 3, 4)
//	wt, _ := gorgonia.Transpose(w)
//	h, _ := gorgonia.Mul(x, wt)
//	y, _ := activation.GELU.Apply(h)
//	loss, _ := gorgonia.Mean(y)
//	m, err := g.Compile(loss)
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	m.Set(x, tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{0.5, -1, 2, 0, 1.5, -0.3, 0.1, -2})))
//	m.Run()
//	dw, _ := m.Grad(w)
//	fmt.Println(dw.Shape())
package graph
