package probe

// The size of the signal inside a network: the root mean square of chosen
// nodes (pre-activations, logits) in one forward pass, to see how an
// initialization scales it from layer to layer.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RMS runs g forward once with x as input and returns the root mean square
// of each of nodes' values (every element, summed in float64 in storage
// order). It compiles a machine of its own and closes it; g needs no loss.
func RMS(g *graph.Graph, input *G.Node, x *tensor.Dense, nodes ...*G.Node) ([]float64, error) {
	m, err := g.Compile(nil, graph.Keep(nodes...))
	if err != nil {
		return nil, fmt.Errorf("probe.RMS: %w", err)
	}
	defer m.Close()
	if err := m.Set(input, x); err != nil {
		return nil, fmt.Errorf("probe.RMS: %w", err)
	}
	if err := m.Run(); err != nil {
		return nil, fmt.Errorf("probe.RMS: %w", err)
	}
	out := make([]float64, len(nodes))
	for k, n := range nodes {
		v, err := m.Value(n)
		t, ok := v.(*tensor.Dense)
		if err != nil || !ok {
			return nil, fmt.Errorf("probe.RMS: node %s holds %T (%v), want a tensor", n.Name(), v, err)
		}
		var ss float64
		var size int
		switch d := t.Data().(type) {
		case []float32:
			for _, f := range d {
				ss += float64(f) * float64(f)
			}
			size = len(d)
		case []float64:
			for _, f := range d {
				ss += f * f
			}
			size = len(d)
		default:
			return nil, fmt.Errorf("probe.RMS: node %s holds %v, want float32 or float64", n.Name(), t.Dtype())
		}
		out[k] = math.Sqrt(ss / float64(size))
	}
	return out, nil
}
