package opkit

// Plumbing shared by every op in this package: output buffers that live as
// long as the op, value and shape checks with readable errors, and a
// panic-free ApplyOp.

import (
	"fmt"
	"hash/fnv"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Buffer is an op's output tensor when no graph.Machine gives it one (the
// op run by Do, by gorgonia's machines or by a test): made on first use and
// reused from one run to the next, so that a run does not allocate. Under
// a Machine the op writes into the machine's tensor instead (Use), and the
// Buffer stays empty.
type Buffer struct{ t *tensor.Dense }

// Get returns the op's own tensor of dtype dt and the given shape.
func (b *Buffer) Get(dt tensor.Dtype, shape tensor.Shape) *tensor.Dense {
	if b.t == nil || b.t.Dtype() != dt || !graph.SameShape(b.t.Shape(), shape) {
		b.t = tensor.New(tensor.Of(dt), tensor.WithShape(shape.Clone()...))
	}
	return b.t
}

// Use returns the tensor an op's UsePreallocDo writes its result into:
// prealloc, the machine's tensor, when it is given (checked to be a plain
// tensor of dtype dt and the given shape), else the op's own (Get).
func (b *Buffer) Use(op fmt.Stringer, prealloc G.Value, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	if prealloc == nil {
		return b.Get(dt, shape), nil
	}
	t, ok := prealloc.(*tensor.Dense)
	if !ok || t.Dtype() != dt || !graph.SameShape(t.Shape(), shape) || t.IsView() {
		return nil, fmt.Errorf("%v: output buffer is a %T, want a %v%v tensor", op, prealloc, dt, shape.Clone()) // a copy: shape may be on the caller's stack
	}
	return t, nil
}

// Elems returns t's elements as a []T, T being t's dtype, without
// allocating: t.Data() builds the slice by reflection and boxes it, two
// allocations per call, thousands per training step. It panics when T is
// not t's dtype, as t.Data().([]T) does.
func Elems[T graph.Float](t *tensor.Dense) []T {
	var s []T
	switch p := any(&s).(type) {
	case *[]float32:
		if t.Dtype() != tensor.Float32 {
			panic(fmt.Sprintf("opkit.Elems[float32]: tensor has dtype %v", t.Dtype()))
		}
		*p = t.Float32s()
	case *[]float64:
		if t.Dtype() != tensor.Float64 {
			panic(fmt.Sprintf("opkit.Elems[float64]: tensor has dtype %v", t.Dtype()))
		}
		*p = t.Float64s()
	}
	return s
}

// HashOf implements Op.Hashcode from Op.WriteHash.
func HashOf(op G.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// CheckFloatTensor checks at graph-build time that n is a float32 or float64
// tensor node, so a wrong dtype is an error here rather than a panic when the
// graph runs.
func CheckFloatTensor(op, role string, n *G.Node) error {
	if n == nil {
		return fmt.Errorf("%s: %s is nil", op, role)
	}
	dt := n.Dtype()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return fmt.Errorf("%s: %s %q has dtype %v, want float32 or float64", op, role, n.Name(), dt)
	}
	if n.Shape().IsScalar() {
		return fmt.Errorf("%s: %s %q is a scalar, want a tensor (reshape it to (1))", op, role, n.Name())
	}
	return nil
}

// CheckSameType checks that two nodes share dtype and shape.
func CheckSameType(op string, a, b *G.Node) error {
	if a.Dtype() != b.Dtype() {
		return fmt.Errorf("%s: %q has dtype %v but %q has %v", op, a.Name(), a.Dtype(), b.Name(), b.Dtype())
	}
	if !graph.SameShape(a.Shape(), b.Shape()) {
		return fmt.Errorf("%s: %q has shape %v but %q has %v", op, a.Name(), a.Shape(), b.Name(), b.Shape())
	}
	return nil
}

// Apply is G.ApplyOp with gorgonia's panics turned into errors.
func Apply(op G.Op, children ...*G.Node) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("ops: building %v: %v", op, r)
		}
	}()
	n, err = G.ApplyOp(op, children...)
	if err != nil {
		return nil, fmt.Errorf("ops: building %v: %w", op, err)
	}
	return n, nil
}

// Dense returns v as a *tensor.Dense of a float dtype.
func Dense(op fmt.Stringer, role string, v G.Value) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%v: %s is a %T, want a *tensor.Dense", op, role, v)
	}
	if dt := d.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("%v: %s has dtype %v, want float32 or float64", op, role, dt)
	}
	return d, nil
}

// SameLayout checks that tensors agree in dtype and shape at run time.
func SameLayout(op fmt.Stringer, want *tensor.Dense, role string, got *tensor.Dense) error {
	if got.Dtype() != want.Dtype() || !graph.SameShape(got.Shape(), want.Shape()) {
		return fmt.Errorf("%v: %s is %v%v, want %v%v", op, role, got.Dtype(), got.Shape(), want.Dtype(), want.Shape())
	}
	return nil
}

// ShapeArg returns the i-th InferShape argument as a shape of its own
// (a copy: gorgonia may keep and change what InferShape returns), so an op
// whose output has the shape of an input returns ShapeArg(op, ds, i).
func ShapeArg(op fmt.Stringer, ds []G.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(ds) {
		return nil, fmt.Errorf("%v: got %d input shapes, want at least %d", op, len(ds), i+1)
	}
	s, ok := ds[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input %d has no shape (%T)", op, i, ds[i])
	}
	return s.Clone(), nil
}

// MaxInputs is the largest number of inputs Inputs handles.
const MaxInputs = 6

// Inputs is the preamble of every op's Do: it checks that vs has one value
// per role and returns them as float tensors, with errors that name the op
// and the role. A role "" is not checked and its entry is nil (a scalar
// the op reads itself). The result is an array, so a training step
// allocates nothing here.
func Inputs(op fmt.Stringer, vs []G.Value, roles ...string) (in [MaxInputs]*tensor.Dense, err error) {
	if len(vs) != len(roles) || len(roles) > MaxInputs {
		return in, fmt.Errorf("%v: got %d inputs, want %d", op, len(vs), len(roles))
	}
	for i, role := range roles {
		if role == "" {
			continue
		}
		if in[i], err = Dense(op, role, vs[i]); err != nil {
			return in, err
		}
	}
	return in, nil
}
