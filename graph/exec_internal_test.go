package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Values whose lifetimes do not overlap share buffers from the second run
// on, and the gradient stays right: loss = Σ d with a = tanh x, b = a⊙a,
// c = tanh b, d = c⊙c, so that a and c each receive two gradients (sums
// Grad makes), and ∂loss/∂x = 2c(1−c²) · 2a(1−a²). The input changes
// between runs, so that a stale buffer would show.
func TestBuffersAreSharedAndStayRight(t *testing.T) {
	g, _ := New(tensor.Float64, 1)
	x, _ := g.Input("x", 5)
	a := G.Must(G.Tanh(x))
	b := G.Must(G.HadamardProd(a, a))
	c := G.Must(G.Tanh(b))
	d := G.Must(G.HadamardProd(c, c))
	loss := G.Must(G.Sum(d))
	m, err := g.Compile(loss, WithRespectTo(x))
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 3; run++ {
		xs := []float64{-1.5, -0.3, 0, 0.4, 2}
		for i := range xs {
			xs[i] *= float64(run)
		}
		if err := m.Set(x, tensor.New(tensor.WithBacking(xs))); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		dx, err := m.Grad(x)
		if err != nil {
			t.Fatal(err)
		}
		for i, xi := range xs {
			ai := math.Tanh(xi)
			ci := math.Tanh(ai * ai)
			want := 2 * ci * (1 - ci*ci) * 2 * ai * (1 - ai*ai)
			if got := dx.Float64s()[i]; math.Abs(got-want) > 1e-15*(1+math.Abs(want)) {
				t.Errorf("run %d: ∂loss/∂x[%d] = %v, want %v", run, i, got, want)
			}
		}
	}
	checkBufferPlan(t, m.exec)
}

// checkBufferPlan checks that the machine reused buffers (fewer distinct
// ones than steps writing into one) and that no two values sharing one
// are alive at once: the later is written only after the last read of the
// earlier (or of any view of it).
func checkBufferPlan(t *testing.T, e *executor) {
	t.Helper()
	owner := map[G.Value]int{} // buffer → the last step written into it so far
	placed := 0
	for i, s := range e.steps {
		if s.buf == nil {
			continue
		}
		placed++
		if j, ok := owner[s.buf]; ok {
			if end := e.end[e.find(j)]; end >= i {
				t.Errorf("step %d (%s) writes the buffer of step %d (%s), read until step %d", i, s.node.Name(), j, e.steps[j].node.Name(), end)
			}
		}
		owner[s.buf] = i
	}
	if len(owner) >= placed {
		t.Errorf("%d steps own %d buffers: nothing reused", placed, len(owner))
	}
}
