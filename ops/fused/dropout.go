package fused

// Inverted dropout: in training, each element is kept with probability 1−p
// and scaled by 1/(1−p); in evaluation it is the identity. The mask of a run
// is a pure function of (seed, name, step), so a run resumed from a
// checkpoint at step s draws exactly the masks the uninterrupted run drew.
//
//	forward   y = x·m,  m ∈ {0, 1/(1−p)}
//	backward  dx = g·m  (the same mask; linear, so differentiable again)

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Mode tells stochastic ops whether the model is training and which
// optimization step the next run computes. *graph.Graph implements it
// (SetTraining, SetStep).
type Mode interface {
	Training() bool
	Step() int
}

// streamName is the name of the random stream an op called name draws
// from: the mode's mapping when it has one (graph.Graph.StreamName), so a
// block that runs in place of others (nn.Stack with recomputation) draws
// the masks of the block it stands for.
func streamName(mode Mode, name string) string {
	if s, ok := mode.(interface{ StreamName(string) string }); ok {
		return s.StreamName(name)
	}
	return name
}

// Dropout returns x with elements zeroed with probability p during training.
// seed and name select the random stream; mode is read at every run.
func Dropout(x *G.Node, p float64, seed uint64, name string, mode Mode) (*G.Node, error) {
	if err := opkit.CheckFloatTensor("fused.Dropout", "input", x); err != nil {
		return nil, err
	}
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("fused.Dropout %q: p = %v, want 0 ≤ p < 1", name, p)
	}
	if mode == nil {
		return nil, fmt.Errorf("fused.Dropout %q: mode is nil", name)
	}
	return opkit.Apply(newDropout(p, seed, name, mode, x.Dims()), x)
}

type dropoutOp struct {
	opkit.Base
	p      float64
	seed   uint64
	name   string
	mode   Mode
	dims   int
	out    opkit.Buffer
	mask   []float64 // nil while the last run was the identity
	masked bool
}

func newDropout(p float64, seed uint64, name string, mode Mode, dims int) *dropoutOp {
	op := &dropoutOp{p: p, seed: seed, name: name, mode: mode, dims: dims}
	op.Base = opkit.Base{
		Name:     fmt.Sprintf("dropout(%g)", p),
		Key:      fmt.Sprintf("ops.dropout(%x,%d,%q,%p)", math.Float64bits(p), seed, name, mode),
		Dims:     []int{dims, dims},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(newDropoutGrad(op), gs.Input(0), gs.Grad())) },
	}
	return op
}

func (op *dropoutOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input")
	if err != nil {
		return nil, err
	}
	x := in[0]
	n := x.Shape().TotalSize()
	op.masked = op.mode.Training() && op.p > 0
	if op.masked {
		if len(op.mask) != n {
			op.mask = make([]float64, n)
		}
		r := rng.New(op.seed, fmt.Sprintf("dropout/%s/%d", streamName(op.mode, op.name), op.mode.Step()))
		scale := 1 / (1 - op.p)
		for i := range op.mask {
			op.mask[i] = 0
			if r.Float64() >= op.p {
				op.mask[i] = scale
			}
		}
	}
	out := op.out.Get(x.Dtype(), x.Shape())
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		applyMask(o, x.Float32s(), op.mask, op.masked)
	case tensor.Float64:
		o := out.Float64s()
		applyMask(o, x.Float64s(), op.mask, op.masked)
	}
	return out, nil
}

func applyMask[T graph.Float](out, x []T, mask []float64, masked bool) {
	if !masked {
		copy(out, x)
		return
	}
	for i, v := range x {
		out[i] = T(float64(v) * mask[i])
	}
}

// dropoutGradOp multiplies the gradient by the forward op's mask. x is an
// input only so that it runs after the forward op.
type dropoutGradOp struct {
	opkit.Base
	fwd *dropoutOp
	out opkit.Buffer
}

// newDropoutGrad: the output does not depend on x (only the mask does), so
// x gets no gradient; the backward is the op itself again.
func newDropoutGrad(fwd *dropoutOp) *dropoutGradOp {
	op := &dropoutGradOp{fwd: fwd}
	op.Base = opkit.Base{
		Name: "dropout.dx", Key: fmt.Sprintf("ops.dropoutgrad(%p)", fwd),
		Dims: []int{fwd.dims, fwd.dims, fwd.dims}, ShapeOf: 1, WRT: []bool{false, true},
		Backward: func(gs *opkit.Grads) { gs.Set(1, gs.Apply(newDropoutGrad(fwd), gs.Input(0), gs.Grad())) },
	}
	return op
}

func (op *dropoutGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "", "gradient")
	if err != nil {
		return nil, err
	}
	g := in[1]
	if op.fwd.masked && len(op.fwd.mask) != g.Shape().TotalSize() {
		return nil, fmt.Errorf("%v: the forward dropout has not run on this input", op)
	}
	out := op.out.Get(g.Dtype(), g.Shape())
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		applyMask(o, g.Float32s(), op.fwd.mask, op.fwd.masked)
	case tensor.Float64:
		o := out.Float64s()
		applyMask(o, g.Float64s(), op.fwd.mask, op.fwd.masked)
	}
	return out, nil
}
