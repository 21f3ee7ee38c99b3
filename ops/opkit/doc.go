// Package opkit is the gorgonia plumbing every op of the project shares,
// and a custom op of your own can use, so that an op's file holds its math
// and not its bookkeeping: Base (embedded in an op, it answers Arity, Type
// — a fresh function type per call, as gorgonia mutates types —, WriteHash,
// Hashcode, String, DiffWRT, SymDiff and DoDiff from the fields the op's
// constructor sets), Grads (one backward rule that SymDiff runs on nodes
// and DoDiff on values), Inputs and SameInputs (the arity and dtype
// preamble of every Do), Buffer and ScalarBuffer (an op's output when no
// graph.Machine provides one), Apply (gorgonia's ApplyOp with its panics
// turned into errors), the build-time checks, and AccumulateGrad for
// DoDiff.
//
// An op whose UsePreallocDo writes its result into the tensor it is given
// (Buffer.Use) lets a graph.Machine own that tensor: the machine plans it
// with every other value of the step and reuses its memory once no op
// reads the value any more (graph.PreallocOp; Base promises it). State a
// backward op needs from the forward pass (statistics, masks) is an op's
// output too, taken by the backward op as an input: never a field one op
// value reads out of another.
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
//	func (op *doubleOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }
//
//	func (op *doubleOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
//		in, err := opkit.Inputs(op, vs, "input")
//		if err != nil {
//			return nil, err
//		}
//		out, err := op.out.Use(op, prealloc, in[0].Dtype(), in[0].Shape())
//		if err != nil {
//			return nil, err
//		}
//		for i, v := range in[0].Float64s() {
//			out.Float64s()[i] = 2 * v
//		}
//		return out, nil
//	}
package opkit
