// Package ops is the bottom layer of the project: the operations a graph
// is built from. It holds no code itself; each concern is a package below:
//
//	ops/activation  the activation family (GELU exact, tanh and sigmoid
//	                forms, ReLU, Softplus, SiLU, ELU, x·σ(βx)): one table
//	                row each, float64 references f, f', f'', slice kernels
//	                and the gorgonia op with a differentiable backward
//	ops/fused       the fused layer ops: Linear/MatMul, LayerNorm, losses,
//	                Add, Dropout, Embedding; each owns its output buffers
//	ops/gemm        the matrix-product backend: the own AVX-512/AVX2 GEMM,
//	                OpenBLAS (loaded at run time) where the own AVX-512
//	                kernels do not run, gonum's pure Go without assembly
//	ops/simd        the activation kernels in assembly (AVX-512), generated
//	                by ops/simd/asm with avo
//	ops/analysis    numerical analysis of activations: expectations under
//	                N(0, 1), minima, roots, inflection points, profiles
//	ops/parallel    the parallel-for every loop over cores goes through
//
// and ops/opkit, the gorgonia plumbing the op packages share
// (input checks, owned buffers, types, hashing).
//
// Import direction: activation, fused and analysis import gemm, simd,
// parallel and opkit; nothing in ops imports nn, optim, train or examples.
package ops
