package graph_test

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The gorgonia reductions users reach for as a loss, each checked through
// graph.Grad against central differences. Mean divides by SizeOf nodes,
// which gorgonia declares non-differentiable: Grad must treat them as
// constants instead of failing.
var lossReductions = []struct {
	name   string
	reduce func(*G.Node) (*G.Node, error)
}{
	{"Mean", func(x *G.Node) (*G.Node, error) { return G.Mean(x) }},
	{"Mean over axis 1, then Sum", func(x *G.Node) (*G.Node, error) {
		m, err := G.Mean(x, 1)
		if err != nil {
			return nil, err
		}
		return G.Sum(m)
	}},
	{"Sum", func(x *G.Node) (*G.Node, error) { return G.Sum(x) }},
	{"Sum over axis 0, then Mean", func(x *G.Node) (*G.Node, error) {
		s, err := G.Sum(x, 0)
		if err != nil {
			return nil, err
		}
		return G.Mean(s)
	}},
	{"Norm (L2)", func(x *G.Node) (*G.Node, error) {
		flat, err := G.Reshape(x, tensor.Shape{x.Shape().TotalSize()})
		if err != nil {
			return nil, err
		}
		return G.Norm(flat, 0, 2)
	}},
}

func TestReductionsAsLosses(t *testing.T) {
	x := tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{
		0.5, -1, 2, 0.25, 1.5, -0.3, 0.1, -2, 0.7, -0.8, 1.1, 0.4}))
	for _, r := range lossReductions {
		t.Run(r.name, func(t *testing.T) {
			f := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
				y, err := activation.GELU.Apply(in[0])
				if err != nil {
					return nil, err
				}
				return r.reduce(y)
			}
			res, err := graph.CheckGrad(f, []*tensor.Dense{x}, graph.GradCheck{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK {
				t.Errorf("%v", res)
			}
		})
	}
}

// TestMeanLossGradient compiles the graph package's own doc example
// (a Linear layer, GELU, gorgonia.Mean as the loss) and compares the input
// gradient with the closed form GELU'(h)·W / N.
func TestMeanLossGradient(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 42)
	x, _ := g.Input("x", 2, 4)
	w, _ := g.Param("fc.weight", graph.XavierUniform(1), 3, 4)
	wt, _ := G.Transpose(w)
	h, _ := G.Mul(x, wt)
	y, _ := activation.GELU.Apply(h)
	loss, err := G.Mean(y)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(loss, graph.WithRespectTo(x, w))
	if err != nil {
		t.Fatalf("gorgonia.Mean as a loss: %v", err)
	}
	xv := []float64{0.5, -1, 2, 0, 1.5, -0.3, 0.1, -2}
	if err := m.Set(x, tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(xv))); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	wv := graph.Float64s(w.Value().(*tensor.Dense))
	dx, _ := m.Grad(x)
	got := graph.Float64s(dx)
	for r := 0; r < 2; r++ {
		for c := 0; c < 4; c++ {
			var want float64
			for o := 0; o < 3; o++ {
				var hv float64
				for k := 0; k < 4; k++ {
					hv += xv[r*4+k] * wv[o*4+k]
				}
				want += activation.GELU.Deriv(hv) * wv[o*4+c] / 6
			}
			if d := got[r*4+c] - want; math.Abs(d) > 1e-14 {
				t.Errorf("dx[%d,%d] = %v, want %v", r, c, got[r*4+c], want)
			}
		}
	}
}
