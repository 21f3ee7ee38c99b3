// Package opkit is the gorgonia plumbing every op of the project shares,
// and a custom op of your own can use, so that an op's file holds its math
// and not its bookkeeping: Inputs (the arity and dtype preamble of every
// Do), Buffer and ScalarBuffer (outputs an op owns and reuses across runs),
// FnType (a fresh function type per call, as gorgonia mutates types),
// HashOf, Apply (gorgonia's ApplyOp with its panics turned into errors),
// the build-time checks, and AccumulateGrad for DoDiff.
//
// Minimal use, inside an op's Do:
//
//	in, err := opkit.Inputs(op, vs, "a", "b")
//	if err != nil {
//		return nil, err
//	}
//	out := op.out.Get(in[0].Dtype(), in[0].Shape())
package opkit
