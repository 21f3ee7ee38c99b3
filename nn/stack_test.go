package nn_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// stackRun builds 4 feed-forward blocks (with dropout) over an input,
// plain or recomputed, and returns the loss and every parameter's gradient
// after two steps (so dropout masks of two steps are drawn).
func stackRun(t *testing.T, dt tensor.Dtype, recompute bool) (float64, map[string][]float64) {
	t.Helper()
	g, err := graph.New(dt, 7)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", 6, 8)
	names := []string{"h.0", "h.1", "h.2", "h.3"}
	y, err := nn.Stack(g, x, names, recompute, func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
		ff, err := nn.NewFeedForward(g, name, nn.FeedForwardConfig{Dim: 8, Hidden: 16, Dropout: 0.25})
		if err != nil {
			return nil, err
		}
		return ff.Forward(x)
	})
	if err != nil {
		t.Fatal(err)
	}
	sq, _ := G.Square(y)
	loss, _ := G.Sum(sq)
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	xv, _ := graph.NewTensor(dt, graph.Normal(0, 1), rng.New(3, "x"), 6, 8)
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	return twoTrainingSteps(t, g, m)
}

// twoTrainingSteps runs m in training mode at steps 0 and 1 (so dropout
// masks of two steps are drawn) and returns the loss and every parameter's
// gradient, by name, of the second.
func twoTrainingSteps(t *testing.T, g *graph.Graph, m *graph.Machine) (float64, map[string][]float64) {
	t.Helper()
	g.SetTraining(true)
	var l float64
	for step := 0; step < 2; step++ {
		g.SetStep(step)
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		l, _ = m.Loss()
	}
	grads := map[string][]float64{}
	for _, p := range m.Params() {
		d, err := m.Grad(p)
		if err != nil {
			t.Fatal(err)
		}
		grads[p.Name()] = graph.Float64s(d)
	}
	return l, grads
}

// Recomputation gives the plain run's loss and gradients bit for bit.
func TestStackRecomputeBitIdentical(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			l0, g0 := stackRun(t, dt, false)
			l1, g1 := stackRun(t, dt, true)
			if math.Float64bits(l0) != math.Float64bits(l1) {
				t.Errorf("loss %v plain, %v recomputed", l0, l1)
			}
			if len(g0) != len(g1) || len(g0) != 4*6 {
				t.Fatalf("%d gradients plain, %d recomputed, want 24", len(g0), len(g1))
			}
			for name, a := range g0 {
				b, ok := g1[name]
				if !ok {
					t.Fatalf("recomputed run has no gradient for %q", name)
				}
				for i := range a {
					if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
						t.Fatalf("%s[%d]: plain %v, recomputed %v", name, i, a[i], b[i])
					}
				}
			}
		})
	}
}

func TestStackErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2, 4)
	widen := func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
		l, err := nn.NewLinear(g, name, 4, 5)
		if err != nil {
			return nil, err
		}
		return l.Forward(x)
	}
	if _, err := nn.Stack(g, x, []string{"a"}, true, widen); err == nil {
		t.Error("a block that changes the shape was accepted")
	}
	if _, err := nn.Stack(g, x, nil, true, widen); err == nil {
		t.Error("an empty stack was accepted")
	}
	n := 0
	varying := func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
		n++
		var opts []nn.Option
		if n%2 == 0 {
			opts = append(opts, nn.NoBias())
		}
		l, err := nn.NewLinear(g, name, 4, 4, opts...)
		if err != nil {
			return nil, err
		}
		return l.Forward(x)
	}
	if _, err := nn.Stack(g, x, []string{"b.0", "b.1"}, true, varying); err == nil {
		t.Error("blocks with different parameters were accepted")
	}
}

// Parameters a model made before it knew the input (a constructor) are the
// ones the recomputed stack trains: same nodes, and gradients for them.
func TestStackUsesExistingParameters(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 2)
	build := func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
		ff, err := nn.NewFeedForward(g, name, nn.FeedForwardConfig{Dim: 4, Hidden: 8})
		if err != nil {
			return nil, err
		}
		return ff.Forward(x)
	}
	if _, err := nn.NewFeedForward(g, "h.0", nn.FeedForwardConfig{Dim: 4, Hidden: 8}); err != nil {
		t.Fatal(err)
	}
	before := len(g.Params())
	x, _ := g.Input("x", 3, 4)
	if _, err := nn.Stack(g, x, []string{"h.0", "h.1"}, true, build); err != nil {
		t.Fatal(err)
	}
	if got, want := len(g.Params()), 2*before; got != want {
		t.Errorf("%d parameters after the stack, want %d (block h.0's reused, h.1's added)", got, want)
	}
}

// A GPT with recomputed blocks (dropout on, so attention and residual
// dropout masks must follow their block) gives the plain model's loss and
// gradients bit for bit, in both float types.
func TestGPTRecomputeBitIdentical(t *testing.T) {
	run := func(dt tensor.Dtype, recompute bool) (float64, map[string][]float64) {
		idv, tgv := make([]float64, 12), make([]float64, 12)
		for i := range idv {
			idv[i], tgv[i] = float64(i*3%7), float64((i*5+1)%7)
		}
		cfg := nn.GPTConfig{BlockSize: 6, VocabSize: 7, Layers: 3, Heads: 2, Dim: 8, Dropout: 0.2, Recompute: recompute, UntieWeights: true}
		g, m := gptTrainer(t, dt, 5, cfg, 2, 6, idv, tgv)
		return twoTrainingSteps(t, g, m)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		l0, g0 := run(dt, false)
		l1, g1 := run(dt, true)
		if math.Float64bits(l0) != math.Float64bits(l1) {
			t.Errorf("%v: loss %v plain, %v recomputed", dt, l0, l1)
		}
		if len(g0) != len(g1) {
			t.Fatalf("%v: %d gradients plain, %d recomputed", dt, len(g0), len(g1))
		}
		for name, a := range g0 {
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(g1[name][i]) {
					t.Fatalf("%v %s[%d]: plain %v, recomputed %v", dt, name, i, a[i], g1[name][i])
				}
			}
		}
	}
}

// denseOf returns the values as a tensor of dtype dt and the given shape.
func denseOf(dt tensor.Dtype, v []float64, shape ...int) *tensor.Dense {
	return graphtest.MustDense(dt, shape, v)
}

// A parameter a block builds but does not use gets a nil gradient, plain
// or recomputed, and the others the same gradients bit for bit.
func TestStackUnusedParameter(t *testing.T) {
	run := func(recompute bool) (*graph.Machine, *graph.Graph) {
		g, _ := graph.New(tensor.Float64, 7)
		x, _ := g.Input("x", 3, 4)
		y, err := nn.Stack(g, x, []string{"h.0", "h.1"}, recompute, func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
			if _, err := g.Param(name+".unused", graph.Normal(0, 1), 2); err != nil {
				return nil, err
			}
			l, err := nn.NewLinear(g, name+".fc", 4, 4)
			if err != nil {
				return nil, err
			}
			return l.Forward(x)
		})
		if err != nil {
			t.Fatal(err)
		}
		sq, _ := G.Square(y)
		loss, _ := G.Sum(sq)
		m, err := g.Compile(loss)
		if err != nil {
			t.Fatalf("recompute=%t: %v", recompute, err)
		}
		xv, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(3, "x"), 3, 4)
		if err := m.Set(x, xv); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatalf("recompute=%t: %v", recompute, err)
		}
		return m, g
	}
	plain, pg := run(false)
	re, rg := run(true)
	for _, name := range []string{"h.0.unused", "h.1.unused", "h.0.fc.weight", "h.1.fc.bias"} {
		pn, _ := pg.Lookup(name)
		rn, _ := rg.Lookup(name)
		pd, err1 := plain.Grad(pn)
		rd, err2 := re.Grad(rn)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if (pd == nil) != strings.HasSuffix(name, "unused") || (rd == nil) != (pd == nil) {
			t.Errorf("%s: gradient plain %v, recomputed %v; want nil exactly for the unused parameter", name, pd, rd)
			continue
		}
		if pd != nil && !slices.Equal(graph.Float64s(pd), graph.Float64s(rd)) {
			t.Errorf("%s: recomputed gradient %v, plain %v", name, graph.Float64s(rd), graph.Float64s(pd))
		}
	}
}
