// Package fused holds the layer operations of the graph, each one gorgonia
// op with a hand-written backward: Linear and MatMul (bias added inside the
// matrix product; every derivative is again a MatMul, so double backward
// works), BatchedMatMul, SumRows/BroadcastRows, LayerNorm, Softmax,
// ScaledDotProductAttention (scaling, causal and padding masks, softmax,
// seeded dropout and ·V), MSELoss, CrossEntropy (with ignore_index),
// BCEWithLogits, Add, Mul, Sigmoid, Dropout, Embedding, Gather/Reshape and
// PrependRow.
//
// Double backward works through the linear ops (MatMul, BatchedMatMul, Mul,
// Add, Gather, Reshape, PrependRow, Dropout); LayerNorm, Softmax, Sigmoid,
// attention and the losses return a clear error when differentiated twice.
//
// Each op writes its result into a tensor the graph.Machine gives it (or,
// run by anything else, into a buffer of its own), so a training step
// allocates nothing and the machine frees each value after its last use.
// Forward state a backward op reads is a node of its own that the
// backward op takes as an input: LayerNorm's row statistics, attention's
// probabilities, and dropout masks (one byte an element, drawn for the
// graph's step). Each op implements both SymDiff (symbolic gradients:
// graph.Grad, run by graph.Machine) and DoDiff (LispMachine).
// Matrix products go through package gemm, loops over rows through package
// parallel.
//
// Minimal use:
//
//	g, _ := graph.New(tensor.Float32, 1)
//	x, _ := g.Input("x", 64, 784)
//	w, _ := g.Param("w", graph.KaimingUniform(math.Sqrt(1.0/3)), 128, 784) // out × in: PyTorch's nn.Linear init
//	b, _ := g.Param("b", graph.Zeros(), 128)
//	h, err := fused.Linear(x, w, b) // x·wᵀ + b
//	fmt.Println(h.Shape(), err)
//
// Errors name the op, the role of the input and the shapes found and wanted;
// a wrong graph is an error when it is built, never a panic when it runs.
package fused
