package fused

// Dropout masks as nodes of their own. A mask op draws which elements a
// dropout keeps, for the step its Mode reports, into a uint8 tensor (one
// byte an element, as PyTorch's bool masks); the op that applies the mask
// and the backward op that applies it again to the gradient both take it
// as an input. So the mask a backward op reads is the one the forward op
// used in the same Run by construction (a graph edge, not state shared
// between op values), and the Machine frees it after its last reader.

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The values of a mask's elements. A mask is either all maskPass (the
// identity: evaluation, or p = 0) or maskDrop and maskKeep (training).
const (
	maskDrop uint8 = 0 // the element is zeroed
	maskKeep uint8 = 1 // the element is kept and scaled by 1/(1−p)
	maskPass uint8 = 2 // the element passes unchanged
)

// maskOp draws a mask of the given shape. Its input is only ordering (the
// tensor the mask is for); it gets no gradient.
type maskOp struct {
	opkit.Base
	p      float64
	seed   uint64
	stream string // "dropout" or "attention-dropout"
	name   string
	mode   Mode
	shape  tensor.Shape
	out    opkit.Buffer
}

func newMask(stream string, p float64, seed uint64, name string, mode Mode, inDims int, shape tensor.Shape) *maskOp {
	op := &maskOp{p: p, seed: seed, stream: stream, name: name, mode: mode, shape: shape.Clone()}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("%s mask(%g)", stream, p),
		Key:  fmt.Sprintf("ops.mask(%s,%x,%d,%q,%p,%v)", stream, math.Float64bits(p), seed, name, mode, shape),
		Dims: []int{inDims, len(shape)}, WRT: []bool{false},
	}
	return op
}

// Type: a tensor of any float type → a uint8 tensor.
func (op *maskOp) Type() hm.Type {
	return hm.NewFnType(G.TensorType{Dims: op.Dims[0], Of: hm.TypeVariable('a')}, G.TensorType{Dims: len(op.shape), Of: tensor.Uint8})
}

func (op *maskOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape.Clone(), nil }

func (op *maskOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo draws the mask into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *maskOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	if len(vs) != 1 {
		return nil, fmt.Errorf("%v: got %d inputs, want 1", op, len(vs))
	}
	out, err := op.out.Use(op, prealloc, tensor.Uint8, op.shape)
	if err != nil {
		return nil, err
	}
	m := out.Uint8s()
	if !op.mode.Training() || op.p == 0 {
		for i := range m {
			m[i] = maskPass
		}
		return out, nil
	}
	r := rng.New(op.seed, fmt.Sprintf("%s/%s/%d", op.stream, streamName(op.mode, op.name), op.mode.Step()))
	for i := range m {
		m[i] = maskDrop
		if r.Float64() >= op.p {
			m[i] = maskKeep
		}
	}
	return out, nil
}

// passes reports a mask that leaves every element unchanged.
func passes(mask []uint8) bool { return len(mask) > 0 && mask[0] == maskPass }

// checkMask checks a mask input at run time against the tensor it masks.
func checkMask(op fmt.Stringer, mask G.Value, n int) ([]uint8, error) {
	m, ok := mask.(*tensor.Dense)
	if !ok || m.Dtype() != tensor.Uint8 || m.Shape().TotalSize() != n {
		return nil, fmt.Errorf("%v: mask is %T, want a uint8 tensor of %d elements", op, mask, n)
	}
	return m.Uint8s(), nil
}
