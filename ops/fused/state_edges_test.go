package fused_test

// Forward state reaches the backward ops through graph edges: a machine
// that computes only a gradient (Keep(dx), no loss) still computes the
// layer norm statistics, attention probabilities and dropout masks of its
// own inputs and step, instead of reading what another machine's forward
// pass left in the op values.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestGradientOnlyMachineComputesItsOwnForwardState(t *testing.T) {
	cases := []struct {
		name  string
		shape []int
		build func(g *graph.Graph, x *G.Node) (*G.Node, error)
	}{
		{"LayerNorm", []int{4, 6}, func(g *graph.Graph, x *G.Node) (*G.Node, error) {
			gamma, _ := g.Param("gamma", graph.Normal(1, 0.5), 6)
			beta, _ := g.Param("beta", graph.Normal(0, 0.5), 6)
			return fused.LayerNorm(x, gamma, beta, 1e-5)
		}},
		{"Dropout", []int{4, 6}, func(g *graph.Graph, x *G.Node) (*G.Node, error) {
			return fused.Dropout(x, 0.5, 2, "drop", g)
		}},
		{"Attention", []int{6, 12}, func(g *graph.Graph, x *G.Node) (*G.Node, error) {
			return fused.ScaledDotProductAttention(x, nil, fused.AttentionConfig{Batch: 2, Heads: 2, Causal: true, Dropout: 0.3, Seed: 2, Name: "attn", Mode: g})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _ := graph.New(tensor.Float64, 1)
			x, _ := g.Input("x", c.shape...)
			y, err := c.build(g, x)
			if err != nil {
				t.Fatal(err)
			}
			// loss = Σ w ⊙ y: its gradient with respect to y is w, so dx
			// does not need y itself.
			w := G.NewTensor(g.ExprGraph(), tensor.Float64, 2, G.WithShape(y.Shape()...), G.WithName("w"), G.WithValue(randn(5, y.Shape()...)))
			loss, err := opkit.Apply(newDotCost(), y, w)
			if err != nil {
				t.Fatal(err)
			}
			dx, err := g.Grad(loss, x)
			if err != nil {
				t.Fatal(err)
			}
			full, err := g.Compile(loss, graph.WithRespectTo(x))
			if err != nil {
				t.Fatal(err)
			}
			gradOnly, err := g.Compile(nil, graph.Keep(dx[0]))
			if err != nil {
				t.Fatal(err)
			}
			x0, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(1, "x0"), c.shape...)
			x1, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(1, "x1"), c.shape...)

			// The full machine's forward pass on x0 at step 0 ...
			g.SetStep(0)
			if err := full.Set(x, x0); err != nil {
				t.Fatal(err)
			}
			if err := full.Run(); err != nil {
				t.Fatal(err)
			}
			// ... then the gradient-only machine on x1 at step 1 ...
			g.SetStep(1)
			if err := gradOnly.Set(x, x1); err != nil {
				t.Fatal(err)
			}
			if err := gradOnly.Run(); err != nil {
				t.Fatalf("gradient-only machine: %v", err)
			}
			v, _ := gradOnly.Value(dx[0])
			got := append([]float64(nil), v.(*tensor.Dense).Float64s()...)
			// ... must give what the full machine gives on x1 at step 1.
			g.SetStep(1)
			if err := full.Run(); err != nil {
				t.Fatal(err)
			}
			want, _ := full.Grad(x)
			if i := mismatch(got, want.Float64s(), 1e-14); i >= 0 {
				t.Errorf("dx[%d] = %v from the gradient-only machine, %v from the full one", i, got[i], want.Float64s()[i])
			}
		})
	}
}

// dotCost is Σ y ⊙ w for matrices y and w, as the root of a graph: the
// gradient of y is w itself (the upstream gradient of a root is 1), a
// node that does not depend on y. (gorgonia's Sum would make it depend on
// y through the size of what it sums.)
type dotCost struct {
	opkit.Base
	out opkit.ScalarBuffer
}

func newDotCost() *dotCost {
	return &dotCost{Base: opkit.Base{Name: "dot", Key: "test.dot", Dims: []int{2, 2, 0}, WRT: []bool{true, false},
		Backward: func(gs *opkit.Grads) { gs.Set(0, gs.Input(1)) }}}
}

func (op *dotCost) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

func (op *dotCost) Do(vs ...G.Value) (G.Value, error) {
	in, err := opkit.Inputs(op, vs, "y", "w")
	if err != nil {
		return nil, err
	}
	var s float64
	for i, v := range in[0].Float64s() {
		s += v * in[1].Float64s()[i]
	}
	return op.out.Set(tensor.Float64, s), nil
}
