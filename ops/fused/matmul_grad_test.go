package fused_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// derivCase: h = f(pre) feeds a product as its a (first) or b (second)
// operand with the given flags; the other operand is w. The backward pass
// then computes dH as one of the four transpose cases of a product.
type derivCase struct {
	rows, cols, other int // pre is rows × cols; w's free dimension
	hFirst, tA, tB    bool
}

func (c derivCase) String() string {
	return fmt.Sprintf("pre %d×%d, other %d, h first=%v tA=%v tB=%v", c.rows, c.cols, c.other, c.hFirst, c.tA, c.tB)
}

// build returns the product with h = act(pre) (or h itself when act is
// zero) in its place; w is shaped to fit.
func (c derivCase) build(g *graph.Graph, act activation.Activation, pre *G.Node) (*G.Node, *G.Node, error) {
	h := pre
	if !act.IsZero() {
		var err error
		if h, err = act.Apply(pre); err != nil {
			return nil, nil, err
		}
	}
	// op(h) is rows×cols (or its transpose); op(w) fits the inner dimension.
	var wShape []int
	if c.hFirst {
		inner := c.cols
		if c.tA {
			inner = c.rows
		}
		wShape = []int{inner, c.other}
		if c.tB {
			wShape = []int{c.other, inner}
		}
	} else {
		inner := c.rows
		if c.tB {
			inner = c.cols
		}
		wShape = []int{c.other, inner}
		if c.tA {
			wShape = []int{inner, c.other}
		}
	}
	w, err := g.Input("w", wShape...)
	if err != nil {
		return nil, nil, err
	}
	if c.hFirst {
		z, err := fused.MatMul(h, w, c.tA, c.tB)
		return z, w, err
	}
	z, err := fused.MatMul(w, h, c.tA, c.tB)
	return z, w, err
}

// derivGrads returns the gradient with respect to pre of Σ r ⊙ z, z the
// case's product of act(pre), and whether the backward graph holds the
// fused op.
func derivGrads(t *testing.T, c derivCase, act activation.Activation, dt tensor.Dtype, preV, wV *tensor.Dense) (*tensor.Dense, bool) {
	t.Helper()
	g, _ := graph.New(dt, 1)
	pre, _ := g.Input("pre", c.rows, c.cols)
	z, w, err := c.build(g, act, pre)
	if err != nil {
		t.Fatal(err)
	}
	loss := weightedLoss(t, z, dt)
	m, err := g.Compile(loss, graph.WithRespectTo(pre))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Set(pre, toDtype(preV, dt)); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(w, toDtype(wV, dt)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	d, err := m.Grad(pre)
	if err != nil {
		t.Fatal(err)
	}
	fusedOp := false
	for _, n := range g.ExprGraph().AllNodes() {
		if n.Op() != nil && strings.Contains(n.Op().String(), "⊙") {
			fusedOp = true
		}
	}
	return d.Clone().(*tensor.Dense), fusedOp
}

// TestMatMulDerivBitIdentical: the backward of an activation whose output
// feeds a product is fused into the product of its incoming gradient, in
// each of the four transpose cases, and gives exactly the unfused result:
// dH from the same graph without the activation, then the activation's
// Backward kernel on it.
func TestMatMulDerivBitIdentical(t *testing.T) {
	var cases []derivCase
	for _, hFirst := range []bool{true, false} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				cases = append(cases, derivCase{rows: 37, cols: 45, other: 13, hFirst: hFirst, tA: tA, tB: tB})
			}
		}
	}
	// Strips of several column blocks (nc = 512), k > kc, products split
	// over threads, a narrow product computed transposed.
	cases = append(cases, derivCase{rows: 150, cols: 700, other: 300, hFirst: true, tB: true},
		derivCase{rows: 256, cols: 384, other: 129, hFirst: true},
		derivCase{rows: 128, cols: 10, other: 64, hFirst: true, tB: true})
	acts := []activation.Activation{activation.GELU, activation.GELUTanh, activation.ReLU, activation.SiLU, activation.ELU}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for i, c := range cases {
			act := acts[i%len(acts)]
			t.Run(fmt.Sprintf("%v/%v/%v", dt, act, c), func(t *testing.T) {
				preV := randn(uint64(10+i), c.rows, c.cols)
				wShape := func() []int {
					g, _ := graph.New(dt, 1)
					pre, _ := g.Input("pre", c.rows, c.cols)
					_, w, err := c.build(g, activation.Activation{}, pre)
					if err != nil {
						t.Fatal(err)
					}
					return w.Shape()
				}()
				wV := randn(uint64(50+i), wShape...)
				got, fusedOp := derivGrads(t, c, act, dt, preV, wV)
				if !fusedOp {
					t.Fatalf("the backward graph has no fused product-and-derivative op")
				}
				dh, _ := derivGrads(t, c, activation.Activation{}, dt, preV, wV)
				want := dh.Clone().(*tensor.Dense)
				switch dt {
				case tensor.Float32:
					err := activation.Backward(act, want.Float32s(), toDtype(preV, dt).Float32s(), dh.Float32s())
					if err != nil {
						t.Fatal(err)
					}
				default:
					if err := activation.Backward(act, want.Float64s(), preV.Float64s(), dh.Float64s()); err != nil {
						t.Fatal(err)
					}
				}
				for j := range want.Shape().TotalSize() {
					if bitsAt(got, j) != bitsAt(want, j) {
						t.Fatalf("dpre[%d] = %v, want %v (unfused product, then Backward)", j, valueAt(got, j), valueAt(want, j))
					}
				}
			})
		}
	}
}

// TestMatMulDerivGradCheck: the fused op's gradients, and (double
// backward) the gradient of its gradient, against finite differences in
// float64.
func TestMatMulDerivGradCheck(t *testing.T) {
	for _, c := range []derivCase{{rows: 5, cols: 6, other: 4, hFirst: true, tB: true}, {rows: 4, cols: 3, other: 5, tA: true}} {
		preV := randn(3, c.rows, c.cols)
		buildW := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			h, err := activation.GELU.Apply(in[0])
			if err != nil {
				return nil, err
			}
			if c.hFirst {
				return fused.MatMul(h, in[1], c.tA, c.tB)
			}
			return fused.MatMul(in[1], h, c.tA, c.tB)
		}
		g0, _ := graph.New(tensor.Float64, 1)
		pre0, _ := g0.Input("pre", c.rows, c.cols)
		_, w0, err := c.build(g0, activation.Activation{}, pre0)
		if err != nil {
			t.Fatal(err)
		}
		inputs := []*tensor.Dense{preV, randn(4, w0.Shape()...)}
		for _, second := range []bool{false, true} {
			check := graph.CheckGrad
			if second {
				check = graph.CheckGradGrad
			}
			res, err := check(buildW, inputs, graph.GradCheck{Seed: 5, RTol: 1e-6, ATol: 1e-8})
			if err != nil || !res.OK {
				t.Errorf("%v second=%v: %v %v", c, second, res, err)
			}
		}
	}
}

// bitsAt returns the bits of element i of a float32 or float64 tensor.
func bitsAt(t *tensor.Dense, i int) uint64 {
	if t.Dtype() == tensor.Float32 {
		return uint64(math.Float32bits(t.Float32s()[i]))
	}
	return math.Float64bits(t.Float64s()[i])
}

func valueAt(t *tensor.Dense, i int) float64 {
	if t.Dtype() == tensor.Float32 {
		return float64(t.Float32s()[i])
	}
	return t.Float64s()[i]
}
