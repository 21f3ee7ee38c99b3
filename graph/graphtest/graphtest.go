package graphtest

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MustDense returns a tensor of dtype dt and shape holding vals (each rounded
// once for float32), as graph.FromFloat64s does, and panics where
// that returns an error (as regexp.MustCompile does).
func MustDense(dt tensor.Dtype, shape []int, vals []float64) *tensor.Dense {
	t, err := graph.FromFloat64s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// MustSet overwrites t's values with vals (each rounded once for float32), as
// graph.SetFloat64s does, and panics where
// that returns an error.
func MustSet(t *tensor.Dense, vals []float64) {
	if err := graph.SetFloat64s(t, vals); err != nil {
		panic(err)
	}
}

// Output compiles g to keep out, runs it with the input x set to xv and
// returns out's values; an error fails tb.
func Output(tb testing.TB, g *graph.Graph, x, out *G.Node, xv *tensor.Dense) []float64 {
	tb.Helper()
	m, err := g.Compile(nil, graph.Keep(out))
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Set(x, xv); err != nil {
		tb.Fatal(err)
	}
	if err := m.Run(); err != nil {
		tb.Fatal(err)
	}
	v, err := m.Value(out)
	if err != nil {
		tb.Fatal(err)
	}
	return graph.Float64s(v.(*tensor.Dense))
}
