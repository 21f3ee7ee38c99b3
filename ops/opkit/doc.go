// Package opkit is the gorgonia plumbing every op of the project shares,
// and a custom op of your own can use, so that an op's file holds its math
// and not its bookkeeping: Base (embedded in an op, it answers Arity, Type
// — a fresh function type per call, as gorgonia mutates types —, WriteHash,
// Hashcode, String, DiffWRT, SymDiff and DoDiff from the fields the op's
// constructor sets), Grads (one backward rule that SymDiff runs on nodes
// and DoDiff on values), Inputs and SameInputs (the arity and dtype
// preamble of every Do), Buffer and ScalarBuffer (outputs an op owns and
// reuses across runs), Apply (gorgonia's ApplyOp with its panics turned
// into errors), the build-time checks, and AccumulateGrad for DoDiff.
//
// Minimal use: an op that doubles its input.
//
//	type doubleOp struct {
//		opkit.Base
//		out opkit.Buffer
//	}
//
//	func newDouble(dims int) *doubleOp {
//		op := &doubleOp{}
//		op.Base = opkit.Base{Name: "double", Key: "double", Dims: []int{dims, dims},
//			Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(newDouble(dims), gs.Grad())) }}
//		return op
//	}
//
//	func (op *doubleOp) Do(vs ...G.Value) (G.Value, error) {
//		in, err := opkit.Inputs(op, vs, "input")
//		if err != nil {
//			return nil, err
//		}
//		out := op.out.Get(in[0].Dtype(), in[0].Shape())
//		// ... out = 2·in[0] ...
//		return out, nil
//	}
package opkit
