package graph_test

// Randomness keyed to the step: a training Run draws its dropout masks for
// the graph's step and advances it; an evaluation Run does neither.

import (
	"slices"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dropoutOnOnes returns a machine computing y = Dropout(x, ½) for x of ones
// (so y is the mask: 0 or 2), a plain dropout and an attention dropout, and
// a function returning the values of both after a Run.
func dropoutOnOnes(t *testing.T) (*graph.Graph, *graph.Machine, func() []float64) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, 3)
	x, _ := g.Input("x", 4, 6)
	y, err := fused.Dropout(x, 0.5, g.Seed(), "drop", g)
	if err != nil {
		t.Fatal(err)
	}
	qkv, _ := g.Input("qkv", 4, 6)
	a, err := fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: 1, Heads: 1, Dropout: 0.5, Seed: g.Seed(), Name: "attn", Mode: g})
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(y, a))
	if err != nil {
		t.Fatal(err)
	}
	ones := tensor.New(tensor.WithShape(4, 6), tensor.WithBacking(slices.Repeat([]float64{1}, 24)))
	if err := m.Set(x, ones); err != nil {
		t.Fatal(err)
	}
	qv, _ := graph.FromFloat64s(tensor.Float64, []float64{
		0.1, 0.2, 1, 0, 0, 1, 0.3, -0.2, 2, 1, 1, 0, -0.5, 0.4, 3, 1, 0, 0, 0.2, 0.1, 4, 0, 1, 1}, 4, 6)
	if err := m.Set(qkv, qv); err != nil {
		t.Fatal(err)
	}
	values := func() []float64 {
		var out []float64
		for _, n := range []*G.Node{y, a} {
			v, err := m.Value(n)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, graph.Float64s(v.(*tensor.Dense))...)
		}
		return out
	}
	return g, m, values
}

// A hand-written loop (Set once, Run every step, as the package docs show)
// gets a fresh dropout mask at every Run, for plain and attention dropout.
func TestTrainingRunsDrawFreshMasks(t *testing.T) {
	g, m, values := dropoutOnOnes(t)
	var runs [][]float64
	for i := 0; i < 3; i++ {
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, values())
		if g.Step() != i+1 {
			t.Errorf("after %d training Runs the step is %d, want %d", i+1, g.Step(), i+1)
		}
	}
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			if slices.Equal(runs[i][:24], runs[j][:24]) {
				t.Errorf("Runs %d and %d drew the same dropout mask %v", i, j, runs[i][:24])
			}
			if slices.Equal(runs[i][24:], runs[j][24:]) {
				t.Errorf("Runs %d and %d drew the same attention-dropout mask", i, j)
			}
		}
	}

	// The masks are the ones a loop setting the step before each Run (the
	// Trainer's) draws: same seed and same steps, same masks.
	g2, m2, values2 := dropoutOnOnes(t)
	for i := range runs {
		g2.SetStep(i)
		if err := m2.Run(); err != nil {
			t.Fatal(err)
		}
		if got := values2(); !slices.Equal(got, runs[i]) {
			t.Errorf("SetStep(%d) then Run: %v, want the %d-th Run's %v", i, got, i, runs[i])
		}
	}
	if g2.Step() != len(runs) {
		t.Errorf("step %d after SetStep(%d) and a Run, want %d", g2.Step(), len(runs)-1, len(runs))
	}
}

// An evaluation Run is the identity for dropout and leaves the step alone.
func TestEvaluationRunsKeepTheStep(t *testing.T) {
	g, m, values := dropoutOnOnes(t)
	g.SetStep(7)
	g.SetTraining(false)
	for i := 0; i < 2; i++ {
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		if g.Step() != 7 {
			t.Errorf("evaluation Run %d moved the step to %d, want 7", i, g.Step())
		}
		if v := values()[:24]; !slices.Equal(v, slices.Repeat([]float64{1}, 24)) {
			t.Errorf("evaluation dropout of ones gave %v, want ones", v)
		}
	}
}

// A Run that fails draws nothing: the step stays.
func TestFailedRunKeepsTheStep(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2)
	y, err := fused.Dropout(x, 0.5, 1, "drop", g)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err == nil {
		t.Fatal("Run without an input value: no error")
	}
	if g.Step() != 0 {
		t.Errorf("step %d after a failed Run, want 0", g.Step())
	}
}
