package graph_test

// Liveness: a training step's machine plans the memory of every
// intermediate value, forward and backward, and reuses a buffer once its
// value is dead.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// transformerStep builds a pre-LN Transformer block with dropout on a
// (batch·T × d) input and a cross-entropy head, the ops of a GPT step.
func transformerStep(t *testing.T, dt tensor.Dtype) *graph.Machine {
	t.Helper()
	const batch, T, d, heads, classes = 2, 8, 16, 2, 5
	g, _ := graph.New(dt, 1)
	x, _ := g.Input("x", batch*T, d)
	y, _ := g.Input("y", batch*T)
	p := func(name string, init graph.Init, shape ...int) *G.Node {
		n, err := g.Param(name, init, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	must := func(n *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	one, zero, w := graph.Constant(1), graph.Zeros(), graph.Normal(0, 0.2)
	h := must(fused.LayerNorm(x, p("ln1.w", one, d), p("ln1.b", zero, d), 1e-5))
	qkv := must(fused.Linear(h, p("attn.w", w, 3*d, d), p("attn.b", zero, 3*d)))
	a := must(fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: batch, Heads: heads, Causal: true, Dropout: 0.1, Seed: 1, Name: "attn", Mode: g}))
	a = must(fused.Linear(a, p("proj.w", w, d, d), nil))
	x = must(fused.Add(x, must(fused.Dropout(a, 0.1, 1, "drop1", g))))
	h = must(fused.LayerNorm(x, p("ln2.w", one, d), nil, 1e-5))
	h = must(activation.GELU.Apply(must(fused.Linear(h, p("fc.w", w, 4*d, d), p("fc.b", zero, 4*d)))))
	x = must(fused.Add(x, must(fused.Linear(h, p("fc2.w", w, d, 4*d), nil))))
	logits := must(fused.Linear(x, p("head.w", w, classes, d), nil))
	loss := must(fused.CrossEntropy(logits, y))
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	xv, _ := graph.NewTensor(dt, graph.Normal(0, 1), rng.New(1, "x"), batch*T, d)
	xn, _ := g.Lookup("x")
	if err := m.Set(xn, xv); err != nil {
		t.Fatal(err)
	}
	ids := make([]int, batch*T)
	for i := range ids {
		ids[i] = i % classes
	}
	yn, _ := g.Lookup("y")
	if err := m.SetIDs(yn, ids); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTrainingStepPlansEveryValue(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		m := transformerStep(t, dt)
		if u := graph.Unplaced(m); len(u) > 0 {
			t.Errorf("%v: the values of %q are not planned by the machine", dt, u)
		}
		graph.CheckBufferPlan(t, m)
		held, values := m.BufferBytes()
		if held <= 0 || held >= values {
			t.Errorf("%v: the machine holds %d bytes for %d bytes of values: nothing reused", dt, held, values)
		}
		t.Logf("%v: %d bytes held for %d bytes of values", dt, held, values)
	}
}
