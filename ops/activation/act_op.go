package activation

// The activation op: g·f^(k)(x) elementwise, for k = 0, 1, 2.
//
//	k = 0: y = f(x)                  (one input; the forward pass)
//	k = 1: y = g·f'(x)               (x and the upstream gradient g; backward)
//	k = 2: y = g·f''(x)              (double backward)
//
// The derivative of op k with respect to x is op k+1 and with respect to g
// is op k again, so the backward pass is itself differentiable: Hessian-vector
// products and other double-backward quantities work through G.Grad (tape
// machine) and DoDiff (LispMachine). Third derivatives are not provided.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Apply returns the node f(x). x must be a float32 or float64 tensor node.
func (a Activation) Apply(x *G.Node) (*G.Node, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := opkit.CheckFloatTensor("ops."+a.Name(), "input", x); err != nil {
		return nil, err
	}
	return opkit.Apply(newActOp(a, 0), x)
}

// ApplyGrad returns the node g·f'(x): the backward op of Apply for an
// upstream gradient g of x's shape and dtype (PyTorch's gelu_backward).
// graph.Grad builds it; it is exported for custom backward passes and tests.
func (a Activation) ApplyGrad(x, g *G.Node) (*G.Node, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := opkit.CheckFloatTensor("ops."+a.Name()+"'", "input", x); err != nil {
		return nil, err
	}
	return applyDeriv(a, 1, x, g)
}

// applyDeriv returns the node g·f^(order)(x).
func applyDeriv(a Activation, order int, x, g *G.Node) (*G.Node, error) {
	op := newActOp(a, order)
	if g == nil {
		return nil, fmt.Errorf("%v: gradient is nil", op)
	}
	if err := opkit.CheckSameType(op.String(), x, g); err != nil {
		return nil, err
	}
	return opkit.Apply(op, x, g)
}

// actOp has its own SymDiff and DoDiff: the backward multiplies by the
// upstream gradient inside the kernel, and DoDiff adds into the gradient
// in place.
type actOp struct {
	opkit.Base
	act   Activation
	order int
	out   opkit.Buffer
}

func newActOp(a Activation, order int) *actOp {
	name := a.Name()
	switch order {
	case 1:
		name += "'·g"
	case 2:
		name += "''·g"
	}
	return &actOp{act: a, order: order, Base: opkit.Base{
		Name: name,
		// Key includes every parameter and the definition (two user-defined
		// ones may share a name), or gorgonia would merge, say, exact and
		// tanh GELU of the same input into one node.
		Key: fmt.Sprintf("ops.act(%s#%d,%x,%x,%d)", a.Name(), a.row.id, math.Float64bits(a.param.hi), math.Float64bits(a.param.lo), order),
		// a → a, or a → a → a with the gradient
		Dims: []int{0, 0, 0}[:2+min(order, 1)],
	}}
}

func (op *actOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.ShapeArg(op, ds, 0)
	if err != nil {
		return nil, err
	}
	if op.order > 0 {
		g, err := opkit.ShapeArg(op, ds, 1)
		if err != nil {
			return nil, err
		}
		if !graph.SameShape(g, s) {
			return nil, fmt.Errorf("%v: gradient shape %v differs from input shape %v", op, g, s)
		}
	}
	return s.Clone(), nil
}

func (op *actOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo writes into prealloc when it is given (the VM may pass an
// input as prealloc; the kernels tolerate that aliasing), else into the op's
// own opkit.Buffer.
func (op *actOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, []string{"input", "gradient"}[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	x, g := in[0], in[0]
	if op.order > 0 {
		g = in[1]
		if err := opkit.SameLayout(op, x, "gradient", g); err != nil {
			return nil, err
		}
	}
	var out *tensor.Dense
	if prealloc != nil {
		if out, err = opkit.Dense(op, "output", prealloc); err != nil {
			return nil, err
		}
		if err := opkit.SameLayout(op, x, "output", out); err != nil {
			return nil, err
		}
	} else {
		out = op.out.Get(x.Dtype(), x.Shape())
	}
	if x.Dtype() == tensor.Float32 {
		err = op.kernel(out.Float32s(), x.Float32s(), g.Float32s(), false)
	} else {
		err = op.kernel(out.Float64s(), x.Float64s(), g.Float64s(), false)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// kernel runs the op's kernel; its error is a user-defined function's panic.
func (op *actOp) kernel(dst, x, g any, add bool) error {
	switch dst := dst.(type) {
	case []float32:
		if op.order == 0 {
			return forward(op.act, dst, x.([]float32))
		}
		return derivative(op.act, op.order, dst, x.([]float32), g.([]float32), add)
	case []float64:
		if op.order == 0 {
			return forward(op.act, dst, x.([]float64))
		}
		return derivative(op.act, op.order, dst, x.([]float64), g.([]float64), add)
	}
	return fmt.Errorf("%v: data that is neither float32 nor float64", op) // dst would escape: an allocation per run
}

// SymDiff builds the gradient nodes for symbolic differentiation (graph.Grad).
func (op *actOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want %d", op, len(inputs), op.Arity())
	}
	x := inputs[0]
	if op.order == 0 {
		dx, err := applyDeriv(op.act, 1, x, grad)
		return G.Nodes{dx}, err
	}
	// y = g·f^(k)(x): dy/dg = f^(k)(x), dy/dx = g·f^(k+1)(x).
	g := inputs[1]
	dg, err := applyDeriv(op.act, op.order, x, grad)
	if err != nil {
		return nil, err
	}
	if op.order >= 2 {
		return nil, fmt.Errorf("%v: the third derivative of %s is not implemented", op, op.act)
	}
	gg, err := hadamard(grad, g)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	dx, err := applyDeriv(op.act, op.order+1, x, gg)
	return G.Nodes{dx, dg}, err
}

// DoDiff accumulates the input gradients for the LispMachine.
func (op *actOp) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	if len(inputs) != op.Arity() {
		return fmt.Errorf("%v: DoDiff got %d inputs, want %d", op, len(inputs), op.Arity())
	}
	gOut, err := gradOf(op, "output", output)
	if err != nil {
		return err
	}
	x, err := opkit.Dense(op, "input", inputs[0].Value())
	if err != nil {
		return err
	}
	if op.order == 0 {
		return op.accumulate(inputs[0], 1, x, gOut)
	}
	g, err := opkit.Dense(op, "gradient input", inputs[1].Value())
	if err != nil {
		return err
	}
	if err := op.accumulate(inputs[1], op.order, x, gOut); err != nil {
		return err
	}
	if op.order >= 2 {
		return fmt.Errorf("%v: the third derivative of %s is not implemented", op, op.act)
	}
	gg := gOut.Clone().(*tensor.Dense)
	if _, err := gg.Mul(g, tensor.UseUnsafe()); err != nil {
		return fmt.Errorf("%v: %w", op, err)
	}
	return op.accumulate(inputs[0], op.order+1, x, gg)
}

// accumulate adds g·f^(order)(x) into the gradient of node n.
func (op *actOp) accumulate(n *G.Node, order int, x, g *tensor.Dense) error {
	d, err := gradOf(op, "input "+n.Name(), n)
	if err != nil {
		return err
	}
	if err := opkit.SameLayout(op, x, "gradient of "+n.Name(), d); err != nil {
		return err
	}
	k := &actOp{act: op.act, order: order} // only its kernel runs
	return k.kernel(d.Data(), x.Data(), g.Data(), true)
}

func gradOf(op fmt.Stringer, role string, n *G.Node) (*tensor.Dense, error) {
	v, err := n.Grad()
	if err != nil {
		return nil, fmt.Errorf("%v: %s has no gradient: %w", op, role, err)
	}
	return opkit.Dense(op, "gradient of "+role, v)
}

// hadamard is G.HadamardProd with panics turned into errors.
func hadamard(a, b *G.Node) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("multiplying %v by %v: %v", a, b, r)
		}
	}()
	return G.HadamardProd(a, b)
}

var (
	_ G.Op              = &actOp{}
	_ G.SDOp            = &actOp{}
	_ G.ADOp            = &actOp{}
	_ G.UsePreallocDoer = &actOp{}
)
