package fused

// Inverted dropout: in training, each element is kept with probability 1−p
// and scaled by 1/(1−p); in evaluation it is the identity. The mask of a run
// is a pure function of (seed, name, step), so a run resumed from a
// checkpoint at step s draws exactly the masks the uninterrupted run drew.
//
//	forward   m = mask(seed, name, step) ∈ {0, 1/(1−p)}   (a node: mask.go)
//	          y = x·m
//	backward  dx = g·m  (the same mask node; linear, so differentiable again)

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Mode tells stochastic ops whether the model is training and which
// optimization step the next run computes. *graph.Graph implements it
// (SetTraining, SetStep; a training Run advances the step).
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
	mask, err := opkit.Apply(newMask("dropout", p, seed, name, mode, x.Dims(), x.Shape()), x)
	if err != nil {
		return nil, err
	}
	return opkit.Apply(newDropout(p, x.Dims()), x, mask)
}

// dropoutOp is y = x·m for an input x (or, in the backward pass, a
// gradient) and a mask node.
type dropoutOp struct {
	opkit.Base
	p   float64
	out opkit.Buffer
}

func newDropout(p float64, dims int) *dropoutOp {
	op := &dropoutOp{p: p}
	op.Base = opkit.Base{
		Name:     fmt.Sprintf("dropout(%g)", p),
		Key:      fmt.Sprintf("ops.dropout(%x,%d)", math.Float64bits(p), dims),
		Dims:     []int{dims, dims, dims},
		WRT:      []bool{true, false},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Apply(newDropout(p, dims), gs.Grad(), gs.Input(1))) },
	}
	return op
}

// Type: the input and a uint8 mask of its shape → the input's type.
func (op *dropoutOp) Type() hm.Type {
	d, a := op.Dims[0], hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: d, Of: a}, G.TensorType{Dims: d, Of: tensor.Uint8}, G.TensorType{Dims: d, Of: a})
}

func (op *dropoutOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *dropoutOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "input", "")
	if err != nil {
		return nil, err
	}
	x := in[0]
	mask, err := checkMask(op, vs[1], x.Shape().TotalSize())
	if err != nil {
		return nil, err
	}
	out, err := op.out.Use(op, prealloc, x.Dtype(), x.Shape())
	if err != nil {
		return nil, err
	}
	scale := 1 / (1 - op.p)
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		applyMask(o, x.Float32s(), mask, scale)
	case tensor.Float64:
		o := out.Float64s()
		applyMask(o, x.Float64s(), mask, scale)
	}
	return out, nil
}

// applyMask sets out to x·m, m being 0, scale or 1 as the mask says, in
// float64 and rounded once.
func applyMask[T graph.Float](out, x []T, mask []uint8, scale float64) {
	if passes(mask) {
		copy(out, x)
		return
	}
	m := [...]float64{maskDrop: 0, maskKeep: scale, maskPass: 1}
	for i, v := range x {
		out[i] = T(float64(v) * m[mask[i]])
	}
}

var (
	_ G.ADOp = &dropoutOp{}
	_ G.SDOp = &dropoutOp{}
)
