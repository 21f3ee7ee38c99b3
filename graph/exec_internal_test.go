package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Two gradient sums whose lifetimes do not overlap share one buffer from the
// second run on, and the gradient stays right: loss = Σ d with a = tanh x,
// b = a⊙a, c = tanh b, d = c⊙c, so that a and c each receive two gradients,
// and ∂loss/∂x = 2c(1−c²) · 2a(1−a²). The input changes between runs, so
// that a stale buffer (of the sums, or of the products, which write into
// the tensor of their first run) would show.
func TestSumsShareABufferAndStayRight(t *testing.T) {
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
	var bufs []G.Value
	for _, s := range m.exec.steps {
		if s.kind == stepSum {
			bufs = append(bufs, s.buf)
		}
	}
	if len(bufs) != 2 || bufs[0] != bufs[1] {
		t.Errorf("sum buffers %p, want two sums sharing one", bufs)
	}
}
