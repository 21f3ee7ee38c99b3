package fused

// The backward of an activation fused into the matrix product that makes
// its incoming gradient: for h = f(pre) feeding a Linear, the backward pass
// computes dH = dY·W (a product) and then dPre = dH ⊙ f'(pre) (a pass over
// dH). Here each strip of dH gets f' while the own GEMM has it in cache
// (gemm.GemmEpilogue), with the activation's own kernel, so the values are
// those of the two separate ops, bit for bit:
//
//	forward   D = (op(A)·op(B)) ⊙ f'(X)
//	backward  the backward of the unfused pair P = op(A)·op(B), D = P ⊙ f'(X)
//
// matMulOp offers it to the activation (activation.GradFuser) when the
// activation's SymDiff sees its gradient is a product nothing else reads.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/ops/opkit"
	"github.com/geluproject/gelu/ops/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FuseDeriv implements activation.GradFuser: a product without bias, not
// batched, of x's shape and dtype becomes the fused node.
func (op *matMulOp) FuseDeriv(a activation.Activation, x, g *G.Node, inputs G.Nodes) (*G.Node, error) {
	if op.bias || op.batched || len(inputs) != 2 || x == nil || a.Validate() != nil {
		return nil, nil
	}
	if x.Dtype() != g.Dtype() || !graph.SameShape(x.Shape(), g.Shape()) {
		return nil, nil
	}
	return opkit.Apply(newMatMulDeriv(op.tA, op.tB, a), inputs[0], inputs[1], x)
}

// matMulDerivOp is (op(A)·op(B)) ⊙ f'(X).
type matMulDerivOp struct {
	opkit.Base
	mm  *matMulOp // the product alone: its dims, and its node in the backward
	act activation.Activation
	out opkit.Buffer
	f32 derivFinisher[float32]
	f64 derivFinisher[float64]
}

func newMatMulDeriv(tA, tB bool, a activation.Activation) *matMulDerivOp {
	op := &matMulDerivOp{mm: newMatMul(tA, tB, false, false), act: a}
	op.Base = opkit.Base{
		Name: fmt.Sprintf("(%s)⊙%s'", op.mm.Name, a.Name()),
		Key:  fmt.Sprintf("ops.matmulderiv(%t,%t,%s)", tA, tB, a.Key()),
		Dims: []int{2, 2, 2, 2},
	}
	op.f32.act, op.f64.act = a, a
	op.f32.bw.Reset(a)
	op.f64.bw.Reset(a)
	return op
}

func (op *matMulDerivOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return op.mm.InferShape(ds[:min(2, len(ds))]...)
}

func (op *matMulDerivOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "a", "b", "activation input")
	if err != nil {
		return nil, err
	}
	a, b, x := in[0], in[1], in[2]
	m, n, k, err := op.mm.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	if x.Dims() != 2 || x.Shape()[0] != m || x.Shape()[1] != n {
		return nil, fmt.Errorf("%v: activation input has shape %v, want (%d, %d)", op, x.Shape(), m, n)
	}
	if a.Dtype() != b.Dtype() || x.Dtype() != a.Dtype() {
		return nil, fmt.Errorf("%v: mixed dtypes %v, %v and %v", op, a.Dtype(), b.Dtype(), x.Dtype())
	}
	c := op.out.Get(a.Dtype(), tensor.Shape{m, n})
	lda, ldb := a.Shape()[1], b.Shape()[1]
	switch c.Dtype() {
	case tensor.Float32:
		op.f32.run(op.mm.tA, op.mm.tB, m, n, k, a.Float32s(), lda, b.Float32s(), ldb, x.Float32s(), c.Float32s())
	case tensor.Float64:
		op.f64.run(op.mm.tA, op.mm.tB, m, n, k, a.Float64s(), lda, b.Float64s(), ldb, x.Float64s(), c.Float64s())
	}
	return c, nil
}

// SymDiff differentiates the unfused pair: P = op(A)·op(B) (the node the
// backward pass had built, found again by its hash) and D = g·f'(X) of
// activation.ApplyGrad, whose rules give dX = g ⊙ P ⊙ f”(X) and dP, and
// the product's give dA and dB.
func (op *matMulDerivOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want 3", op, len(inputs))
	}
	a, b, x := inputs[0], inputs[1], inputs[2]
	p, err := opkit.Apply(newMatMul(op.mm.tA, op.mm.tB, false, false), a, b)
	if err != nil {
		return nil, err
	}
	d, err := op.act.ApplyGrad(x, p)
	if err != nil {
		return nil, err
	}
	dxp, err := d.Op().(G.SDOp).SymDiff(G.Nodes{x, p}, d, grad)
	if err != nil {
		return nil, err
	}
	dab, err := p.Op().(G.SDOp).SymDiff(G.Nodes{a, b}, p, dxp[1])
	if err != nil {
		return nil, err
	}
	return G.Nodes{dab[0], dab[1], dxp[0]}, nil
}

// DoDiff: the op is built by graph.Grad's symbolic pass only, never in a
// graph the LispMachine differentiates.
func (op *matMulDerivOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: no DoDiff; differentiate with graph.Grad", op)
}

// derivFinisher multiplies the strips of C by f'(x) in place, as the own
// GEMM finishes them.
type derivFinisher[T graph.Float] struct {
	act  activation.Activation
	bw   activation.Backwarder[T]
	x    []T
	m, n int
}

func (f *derivFinisher[T]) run(tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, x, c []T) {
	f.x, f.m, f.n = x, m, n
	gemm.GemmEpilogue(tA, tB, m, n, k, a, lda, b, ldb, c, n, gemm.Epilogue[T]{Finish: f})
	f.x = nil
}

// Finish sets C = C ⊙ f'(X) on rows i0:i1, columns j0:j1 (ldc = n).
func (f *derivFinisher[T]) Finish(c []T, ldc, i0, i1, j0, j1 int) {
	n := f.n
	if j0 == 0 && j1 == n {
		// Whole rows: one run. All of C (another BLAS, or a product too
		// small to split) is shared out over the cores as the unfused op
		// would; a strip is on a GEMM thread already.
		lo, hi := i0*n, i1*n
		if i0 == 0 && i1 == f.m && hi >= 2*parallel.MinGrain {
			_ = activation.Backward(f.act, c[lo:hi], f.x[lo:hi], c[lo:hi])
			return
		}
		f.bw.Backward(c[lo:hi], f.x[lo:hi], c[lo:hi])
		return
	}
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		f.bw.Backward(row, f.x[i*n+j0:i*n+j1], row)
	}
}

var (
	_ activation.GradFuser = &matMulOp{}
	_ G.SDOp               = &matMulDerivOp{}
	_ G.ADOp               = &matMulDerivOp{}
)
