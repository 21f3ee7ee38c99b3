package graph_test

import (
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mlpWithBias builds Σ u ⊙ (GELU(x·W1ᵀ + b1)·W2ᵀ + b2) with its own
// parameters: the last layer's bias b2 enters the output linearly, so
// ∂L/∂b2 = Σ_rows u does not depend on anything and the second
// derivative with respect to b2 is 0, as PyTorch's gradgradcheck finds.
func mlpWithBias(g *graph.Graph, in []*G.Node) (*G.Node, error) {
	w1, err := g.Param("mlp.layers.0.weight", graph.Normal(0, 1), 5, 4)
	if err != nil {
		return nil, err
	}
	b1, _ := g.Param("mlp.layers.0.bias", graph.Normal(0, 1), 5)
	w2, _ := g.Param("mlp.layers.1.weight", graph.Normal(0, 1), 2, 5)
	b2, _ := g.Param("mlp.layers.1.bias", graph.Normal(0, 1), 2)
	linear := func(x, w, b *G.Node) (*G.Node, error) {
		wt, err := G.Transpose(w)
		if err != nil {
			return nil, err
		}
		y, err := G.Mul(x, wt)
		if err != nil {
			return nil, err
		}
		return G.BroadcastAdd(y, b, nil, []byte{0})
	}
	h, err := linear(in[0], w1, b1)
	if err != nil {
		return nil, err
	}
	if h, err = activation.GELU.Apply(h); err != nil {
		return nil, err
	}
	return linear(h, w2, b2)
}

// CheckGradGrad checks a model whose last layer has a bias: the bias's
// second derivative is 0, which the finite differences confirm like any
// other element's (the bias is among the elements checked).
func TestCheckGradGradOutputBias(t *testing.T) {
	inputs := []*tensor.Dense{randTensor(3, 3, 4)}
	res, err := graph.CheckGradGrad(mlpWithBias, inputs, graph.GradCheck{Seed: 1})
	if err != nil || !res.OK {
		t.Fatalf("CheckGradGrad: %v, %v", res, err)
	}
	// 3·4 input elements, 5·4 + 5 + 2·5 + 2 parameters.
	if want := 3*4 + 5*4 + 5 + 2*5 + 2; res.Checked != want {
		t.Errorf("%d elements checked, want %d (the bias among them)", res.Checked, want)
	}
}

// A second derivative that is not 0 for a parameter the gradient does not
// depend on cannot exist; but a wrong zero can: a parameter that enters
// the gradient only through an op whose derivative claims it does not
// (gorgonia's non-differentiable argument of Mean, say) is still compared
// numerically. Here b2 enters the gradient after all (the output is
// squared), and the check must see its nonzero second derivative.
func TestCheckGradGradSquaredBias(t *testing.T) {
	sq := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		y, err := mlpWithBias(g, in)
		if err != nil {
			return nil, err
		}
		return G.Square(y)
	}
	res, err := graph.CheckGradGrad(sq, []*tensor.Dense{randTensor(3, 3, 4)}, graph.GradCheck{Seed: 1})
	if err != nil || !res.OK {
		t.Fatalf("CheckGradGrad: %v, %v", res, err)
	}
}

// Grad's "does not affect" error names the cost the caller passed, or,
// when it has no name of its own, describes it, instead of gorgonia's
// internal node name ("+ false(%2b, %28)").
func TestGradNamesTheCost(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	y, _ := g.Input("y", 3)
	s, _ := G.Sum(x)
	_, err := g.Grad(s, y)
	if err == nil || strings.Contains(err.Error(), "(%") || !strings.Contains(err.Error(), `"y" does not affect the cost`) ||
		!strings.Contains(err.Error(), "unnamed") || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("unnamed cost: %v, want it described (op and operands by name), not gorgonia's internal name", err)
	}
	named := G.NewScalar(g.ExprGraph(), tensor.Float64, G.WithName("loss"))
	_, err = g.Grad(named, y)
	if err == nil || !strings.Contains(err.Error(), `"y" does not affect the cost "loss"`) {
		t.Errorf("named cost: %v, want it named", err)
	}
}
