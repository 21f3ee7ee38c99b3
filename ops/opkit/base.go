package opkit

// Plumbing for the fused layer ops (matmul, layer norm, losses, ...): their
// gorgonia types, scalar values, and gradient accumulation for DoDiff.

import (
	"fmt"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Defaults gives the fused ops the Op methods they all share: they return
// a tensor they own (a pointer that later in-place ops may reuse), call no
// external library through gorgonia's batching, and never overwrite an input.
type Defaults struct{}

func (Defaults) ReturnsPtr() bool     { return true }
func (Defaults) CallsExtern() bool    { return false }
func (Defaults) OverwritesInput() int { return -1 }

// WritesPrealloc makes graph.PreallocOp's promise for an op built on
// opkit: if it has UsePreallocDo, that writes the op's whole result into
// the tensor it is given (Buffer.Use), so a graph.Machine owns the result
// and reuses its memory once the value is dead. An op of your own whose
// UsePreallocDo does anything else must override it to return false.
func (Defaults) WritesPrealloc() bool { return true }

// AllTrue is DiffWRT for ops differentiable in every input.
func AllTrue(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// FnType returns a fresh function type over one element type: each entry of
// dims is an argument's (and finally the result's) number of dimensions,
// 0 meaning a scalar. A fresh value each call, since gorgonia mutates types.
func FnType(dims ...int) hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, len(dims))
	for i, d := range dims {
		if d == 0 {
			ts[i] = a
		} else {
			ts[i] = G.TensorType{Dims: d, Of: a}
		}
	}
	return hm.NewFnType(ts...)
}

// ScalarValue reads a float32/float64 scalar Value (or one-element tensor).
func ScalarValue(op fmt.Stringer, role string, v G.Value) (float64, error) {
	x, err := graph.Scalar(v)
	if err != nil {
		return 0, fmt.Errorf("%v: %s: %w", op, role, err)
	}
	return x, nil
}

// ScalarBuffer is an op's scalar output, reused across runs.
type ScalarBuffer struct {
	f32 *G.F32
	f64 *G.F64
}

func (s *ScalarBuffer) Set(dt tensor.Dtype, v float64) G.Value {
	if dt == tensor.Float32 {
		if s.f32 == nil {
			s.f32 = new(G.F32)
		}
		*s.f32 = G.F32(v)
		return s.f32
	}
	if s.f64 == nil {
		s.f64 = new(G.F64)
	}
	*s.f64 = G.F64(v)
	return s.f64
}

// AccumulateGrad adds v into the gradient (dual value) of node n, for the
// LispMachine's DoDiff.
func AccumulateGrad(op fmt.Stringer, n *G.Node, v G.Value) error {
	d, err := n.Grad()
	if err != nil {
		return fmt.Errorf("%v: input %q has no gradient: %w", op, n.Name(), err)
	}
	switch dst := d.(type) {
	case *tensor.Dense:
		src, ok := v.(*tensor.Dense)
		if !ok || !graph.SameShape(src.Shape(), dst.Shape()) || src.Dtype() != dst.Dtype() {
			return fmt.Errorf("%v: gradient for %q is %v, want a %v%v tensor", op, n.Name(), v, dst.Dtype(), dst.Shape())
		}
		switch dst.Dtype() {
		case tensor.Float32:
			a := dst.Float32s()
			for i, x := range src.Float32s() {
				a[i] += x
			}
		case tensor.Float64:
			a := dst.Float64s()
			for i, x := range src.Float64s() {
				a[i] += x
			}
		}
	case *G.F64:
		x, err := ScalarValue(op, "gradient", v)
		if err != nil {
			return err
		}
		*dst += G.F64(x)
	case *G.F32:
		x, err := ScalarValue(op, "gradient", v)
		if err != nil {
			return err
		}
		*dst += G.F32(x)
	default:
		return fmt.Errorf("%v: gradient of %q is a %T", op, n.Name(), d)
	}
	return nil
}

// OutGrad returns the output node's gradient (DoDiff) as a Value.
func OutGrad(op fmt.Stringer, output *G.Node) (G.Value, error) {
	g, err := output.Grad()
	if err != nil {
		return nil, fmt.Errorf("%v: output has no gradient: %w", op, err)
	}
	return g, nil
}

// CheckMatrix checks at graph-build time that n is a float matrix.
func CheckMatrix(op, role string, n *G.Node) error {
	if err := CheckFloatTensor(op, role, n); err != nil {
		return err
	}
	if n.Dims() != 2 {
		return fmt.Errorf("%s: %s %q has shape %v, want a matrix (rows × features)", op, role, n.Name(), n.Shape())
	}
	return nil
}

// CheckVector checks at graph-build time that n is a float vector of length d
// with the given dtype.
func CheckVector(op, role string, n *G.Node, d int, dt tensor.Dtype) error {
	if err := CheckFloatTensor(op, role, n); err != nil {
		return err
	}
	if n.Dims() != 1 || n.Shape()[0] != d {
		return fmt.Errorf("%s: %s %q has shape %v, want (%d)", op, role, n.Name(), n.Shape(), d)
	}
	if n.Dtype() != dt {
		return fmt.Errorf("%s: %s %q has dtype %v, want %v", op, role, n.Name(), n.Dtype(), dt)
	}
	return nil
}

// Signature is the Arity and Type of an op whose last inputs are optional
// (a bias, an affine γ and β): In lists every input's number of dimensions,
// the first Required of them always given, and Out is the result's.
type Signature struct {
	In       []int
	Required int
	Out      int
}

// Arity is the number of inputs, with or without the optional ones.
func (s Signature) Arity(optional bool) int {
	if optional {
		return len(s.In)
	}
	return s.Required
}

// Dims lists the number of dimensions of the inputs taken and of the
// result: Base.Dims.
func (s Signature) Dims(optional bool) []int {
	n := s.Arity(optional)
	dims := make([]int, n+1)
	copy(dims, s.In[:n])
	dims[n] = s.Out
	return dims
}

// Type is FnType over the inputs taken and the result.
func (s Signature) Type(optional bool) hm.Type { return FnType(s.Dims(optional)...) }

// CheckSameFloat checks at graph-build time that a and b are float tensors
// of the same dtype and shape: the inputs of an elementwise binary op.
func CheckSameFloat(op string, a, b *G.Node) error {
	if err := CheckFloatTensor(op, "a", a); err != nil {
		return err
	}
	if err := CheckFloatTensor(op, "b", b); err != nil {
		return err
	}
	return CheckSameType(op, a, b)
}

// SameInputs is Inputs for ops whose inputs share the first one's dtype
// and shape (elementwise ops and their gradients): every checked role
// after the first must match it.
func SameInputs(op fmt.Stringer, vs []G.Value, roles ...string) (in [MaxInputs]*tensor.Dense, err error) {
	if in, err = Inputs(op, vs, roles...); err != nil {
		return in, err
	}
	for i := 1; i < len(roles); i++ {
		if in[i] == nil {
			continue
		}
		if err := SameLayout(op, in[0], roles[i], in[i]); err != nil {
			return in, err
		}
	}
	return in, nil
}
