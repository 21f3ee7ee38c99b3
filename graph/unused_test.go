package graph_test

// A parameter that does not affect the loss gets a nil gradient, as
// PyTorch leaves its .grad None, instead of failing Compile.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/fused"
	"gorgonia.org/tensor"
)

func TestUnusedParameterHasNilGradient(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 4, 3)
	w, _ := g.Param("body.weight", graph.Normal(0, 1), 2, 3)
	head, _ := g.Param("other_head.weight", graph.Normal(0, 1), 5, 2) // built, not used by this loss
	target, _ := g.Input("target", 4, 2)
	y, err := fused.Linear(x, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fused.Linear(y, head, nil); err != nil { // another loss would use it
		t.Fatal(err)
	}
	loss, err := fused.MSELoss(y, target)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatalf("Compile with an unused parameter: %v", err)
	}
	xv, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(1, "x"), 4, 3)
	tv, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(1, "t"), 4, 2)
	if !m.HasGrad(w) || m.HasGrad(head) || m.HasGrad(x) || m.HasGrad(nil) {
		t.Errorf("HasGrad(used, unused, input, nil) = %v, %v, %v, %v, want true, false, false, false", m.HasGrad(w), m.HasGrad(head), m.HasGrad(x), m.HasGrad(nil))
	}
	if err := m.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(target, tv); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	grads, err := m.Grads()
	if err != nil {
		t.Fatal(err)
	}
	if len(grads) != 2 || grads[0] == nil || grads[1] != nil {
		t.Fatalf("Grads() = %v, want [gradient of body.weight, nil]", grads)
	}
	if d, err := m.Grad(head); d != nil || err != nil {
		t.Errorf("Grad(unused) = %v, %v, want nil, nil", d, err)
	}
	if d, err := m.Grad(w); d == nil || err != nil {
		t.Errorf("Grad(used) = %v, %v, want a gradient", d, err)
	}
	if err := m.CheckFinite(); err != nil {
		t.Errorf("CheckFinite with a nil gradient: %v", err)
	}
	// The used parameter's gradient is the one a model without the head
	// gets: 2/n · (x·wᵀ − t)ᵀ·x, computed here directly.
	xs, ws, ts, gw := xv.Float64s(), graph.Float64s(w.Value().(*tensor.Dense)), tv.Float64s(), grads[0].Float64s()
	for o := 0; o < 2; o++ {
		for i := 0; i < 3; i++ {
			var want float64
			for r := 0; r < 4; r++ {
				yr := xs[r*3]*ws[o*3] + xs[r*3+1]*ws[o*3+1] + xs[r*3+2]*ws[o*3+2]
				want += 2.0 / 8 * (yr - ts[r*2+o]) * xs[r*3+i]
			}
			if d := gw[o*3+i] - want; d > 1e-12 || d < -1e-12 {
				t.Errorf("dL/dw[%d,%d] = %v, want %v", o, i, gw[o*3+i], want)
			}
		}
	}

	// Graph.Grad, asked directly, still says which node is unused (as
	// torch.autograd.grad does without allow_unused).
	_, err = g.Grad(loss, head)
	wantErr(t, err, `"other_head.weight" does not affect`)
	// A loss no parameter affects is an error, as PyTorch's backward on a
	// loss that requires no gradient.
	sx, _ := fused.MSELoss(target, target)
	_, err = g.Compile(sx)
	wantErr(t, err, "affects loss")
}
