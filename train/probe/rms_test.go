package probe

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestRMS(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			g, err := graph.New(dt, 1)
			if err != nil {
				t.Fatal(err)
			}
			x, _ := g.Input("x", 2, 2)
			y, err := G.Neg(x)
			if err != nil {
				t.Fatal(err)
			}
			in := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, -1, 3, 1}))
			if dt == tensor.Float32 {
				in = tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, -1, 3, 1}))
			}
			got, err := RMS(g, x, in, y)
			// √((1 + 1 + 9 + 1)/4) = √3
			if err != nil || len(got) != 1 || math.Abs(got[0]-math.Sqrt(3)) > 1e-15 {
				t.Errorf("RMS = %v, %v; want [√3]", got, err)
			}
		})
	}
}
