package fused

// The op shared by Sigmoid and Softmax: unary ops whose backward reads
// their own output y (not their input), (y, g) ↦ dx, and is not itself
// differentiable.

import (
	"fmt"

	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type savedOutputKind int

const (
	sigmoidKind savedOutputKind = iota
	softmaxKind
)

// savedOutputKinds holds each kind's name and its kernel, which writes
// f(x) into y when g is nil and the backward g ↦ dx, x being f's output,
// when it is not (n: the length of a row).
var savedOutputKinds = [...]struct {
	name, title string
	f32         func(y, x, g []float32, n int)
	f64         func(y, x, g []float64, n int)
}{
	sigmoidKind: {"sigmoid", "Sigmoid", sigmoidInto[float32], sigmoidInto[float64]},
	softmaxKind: {"softmax", "Softmax", softmaxRows[float32], softmaxRows[float64]},
}

func applySavedOutput(kind savedOutputKind, x *G.Node) (*G.Node, error) {
	k := savedOutputKinds[kind]
	if err := opkit.CheckFloatTensor("fused."+k.title, "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(newSavedOutput(kind, x.Dims(), false), x)
}

// savedOutputOp is the forward op, or with grad its backward op (y, g) ↦ dx.
type savedOutputOp struct {
	opkit.Base
	kind savedOutputKind
	grad bool
	out  opkit.Buffer
}

func newSavedOutput(kind savedOutputKind, dims int, grad bool) *savedOutputOp {
	k := savedOutputKinds[kind]
	op := &savedOutputOp{kind: kind, grad: grad}
	op.Base = opkit.Base{Name: k.name, Key: fmt.Sprintf("ops.%s(%d,%t)", k.name, dims, grad), Dims: []int{dims, dims}, Backward: op.backward}
	if grad {
		op.Name, op.Dims = k.name+".dx", []int{dims, dims, dims}
		op.Backward = opkit.NotImplemented("double backward through " + k.title)
	}
	return op
}

func (op *savedOutputOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes the result into prealloc, a Machine's tensor, or
// without one into the op's own buffer.
func (op *savedOutputOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.SameInputs(op, vs, []string{"input", "gradient"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x, g := in[0], in[1]
	n := x.Shape()[x.Dims()-1]
	out, err := op.out.Use(op, prealloc, x.Dtype(), x.Shape())
	if err != nil {
		return nil, err
	}
	switch out.Dtype() {
	case tensor.Float32:
		o := out.Float32s()
		savedOutputKinds[op.kind].f32(o, x.Float32s(), affineData[float32](g), n)
	case tensor.Float64:
		o := out.Float64s()
		savedOutputKinds[op.kind].f64(o, x.Float64s(), affineData[float64](g), n)
	}
	return out, nil
}

func (op *savedOutputOp) backward(gs *opkit.Grads) {
	gs.Set(0, gs.Apply(newSavedOutput(op.kind, op.Dims[0], true), gs.Output(), gs.Grad()))
}

var (
	_ G.ADOp = &savedOutputOp{}
	_ G.SDOp = &savedOutputOp{}
)
