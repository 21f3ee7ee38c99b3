package graph_test

// Machine.OnGradReady: each gradient handed over once, final when handed
// over, as early as the backward pass allows (the output layer's before
// the first layer's), without changing any result or allocating.

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tiedMLP is loss = CE(W₂·GELU(W·GELU(W·GELU(W₁·x + b₁))) + b₂, y): W is
// used twice (its gradient is a sum Grad makes, final only after the
// second term), and "unused" does not affect the loss (no gradient).
func tiedMLP(t *testing.T, dt tensor.Dtype) (*graph.Machine, *graph.Graph) {
	t.Helper()
	const batch, in, hidden, classes = 4, 6, 8, 3
	g, _ := graph.New(dt, 7)
	x, _ := g.Input("x", batch, in)
	y, _ := g.Input("y", batch)
	w1, _ := g.Param("fc1.weight", graph.XavierUniform(1), hidden, in)
	b1, _ := g.Param("fc1.bias", graph.Normal(0, 0.1), hidden)
	w, _ := g.Param("tied.weight", graph.XavierUniform(1), hidden, hidden)
	w2, _ := g.Param("fc2.weight", graph.XavierUniform(1), classes, hidden)
	b2, _ := g.Param("fc2.bias", graph.Zeros(), classes)
	if _, err := g.Param("unused", graph.Zeros(), 2); err != nil {
		t.Fatal(err)
	}
	must := func(n *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	h := must(activation.GELU.Apply(must(fused.Linear(x, w1, b1))))
	h = must(activation.GELU.Apply(must(fused.Linear(h, w, nil))))
	h = must(activation.GELU.Apply(must(fused.Linear(h, w, nil))))
	loss := must(fused.CrossEntropy(must(fused.Linear(h, w2, b2)), y))
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	xv, _ := graph.NewTensor(dt, graph.Normal(0, 1), rng.New(2, "x"), batch, in)
	yv, _ := graph.FromFloat64s(dt, []float64{0, 2, 1, 2}, batch)
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(y, yv); err != nil {
		t.Fatal(err)
	}
	return m, g
}

func paramIndex(t *testing.T, m *graph.Machine, name string) int {
	t.Helper()
	i := slices.IndexFunc(m.Params(), func(p *G.Node) bool { return p.Name() == name })
	if i < 0 {
		t.Fatalf("no parameter %q", name)
	}
	return i
}

func TestOnGradReady(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			m, _ := tiedMLP(t, dt)
			first := paramIndex(t, m, "fc1.weight")
			type call struct {
				i    int
				vals []float64
				// firstDone: whether fc1.weight's gradient had a value of
				// this run at the time of the call (it has none before
				// the first Run ends unless it was computed).
				firstDone bool
			}
			var calls []call
			m.OnGradReady(func(i int, g *tensor.Dense) error {
				_, err := m.Grad(m.Params()[first])
				calls = append(calls, call{i, graph.Float64s(g), err == nil})
				return nil
			})
			if err := m.Run(); err != nil {
				t.Fatal(err)
			}
			grads, err := m.Grads()
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for _, c := range calls {
				name := m.Params()[c.i].Name()
				if seen[c.i] {
					t.Errorf("the gradient of %s handed over twice", name)
				}
				seen[c.i] = true
				if grads[c.i] == nil {
					t.Errorf("a call for %s, which has no gradient", name)
					continue
				}
				// Final when handed over: equal, bit for bit, to the value
				// at the end of the Run.
				for j, v := range graph.Float64s(grads[c.i]) {
					if math.Float64bits(v) != math.Float64bits(c.vals[j]) {
						t.Errorf("%s[%d] was %v when handed over, %v after Run", name, j, c.vals[j], v)
						break
					}
				}
			}
			for i, g := range grads {
				if g != nil && !seen[i] {
					t.Errorf("the gradient of %s was never handed over", m.Params()[i].Name())
				}
			}
			// As early as the backward pass allows: the output layer's
			// gradients come while the first layer's is not yet computed,
			// and the first layer's comes last.
			order := make([]string, len(calls))
			for k, c := range calls {
				order[k] = m.Params()[c.i].Name()
			}
			t.Logf("order: %v", order)
			if len(calls) == 0 || calls[0].firstDone || order[len(order)-1] != "fc1.weight" && order[len(order)-1] != "fc1.bias" {
				t.Errorf("order %v: want the output layer's gradients first, before the first layer's exists, and the first layer's last", order)
			}
			if k := slices.Index(order, "tied.weight"); k < slices.Index(order, "fc2.weight") || k > slices.Index(order, "fc1.weight") {
				t.Errorf("order %v: the tied weight's gradient (two terms) must come between the output layer's and the first layer's", order)
			}
		})
	}
}

// A hook changes no result: the gradients of runs with and without it are
// the same bits, and evaluation Runs do not call it.
func TestOnGradReadyChangesNothing(t *testing.T) {
	m, g := tiedMLP(t, tensor.Float32)
	run := func() [][]float64 {
		t.Helper()
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		gs, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, g := range gs {
			if g != nil {
				out = append(out, graph.Float64s(g))
			}
		}
		return out
	}
	g.SetStep(0)
	plain := run()
	calls := 0
	m.OnGradReady(func(int, *tensor.Dense) error { calls++; return nil })
	g.SetStep(0)
	hooked := run()
	for k := range plain {
		if !slices.Equal(plain[k], hooked[k]) {
			t.Errorf("gradient %d differs with the hook", k)
		}
	}
	if calls != len(plain) {
		t.Errorf("%d calls for %d gradients", calls, len(plain))
	}
	g.SetTraining(false)
	calls = 0
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	g.SetTraining(true)
	if calls != 0 {
		t.Errorf("an evaluation Run called the hook %d times", calls)
	}
	m.OnGradReady(nil)
	run()
	if calls != 0 {
		t.Errorf("a removed hook was called %d times", calls)
	}
}

// An error from the hook ends Run with it, leaving the graph's step where
// it was; the next Run completes.
func TestOnGradReadyError(t *testing.T) {
	m, g := tiedMLP(t, tensor.Float64)
	stop := errors.New("the reduction failed")
	m.OnGradReady(func(i int, _ *tensor.Dense) error {
		if m.Params()[i].Name() == "tied.weight" {
			return stop
		}
		return nil
	})
	g.SetStep(5)
	err := m.Run()
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), `"tied.weight"`) {
		t.Fatalf("Run: %v, want the hook's error naming tied.weight", err)
	}
	if g.Step() != 5 {
		t.Errorf("step %d after a failed Run, want 5", g.Step())
	}
	m.OnGradReady(nil)
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestOnGradReadyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m, _ := tiedMLP(t, tensor.Float32)
	sum := 0.0
	m.OnGradReady(func(i int, g *tensor.Dense) error { sum += float64(g.Float32s()[0]); return nil })
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	var err error
	allocs := testing.AllocsPerRun(20, func() { err = m.Run() })
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per Run with a hook, want 0", allocs)
	}
}
