package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// Dropout zeroes elements with probability P while the graph is in training
// mode (graph.SetTraining) and is the identity in evaluation. Masks depend
// on the graph's seed, the layer's name and graph.Step.
type Dropout struct {
	Name string
	P    float64
	g    *graph.Graph
}

// NewDropout returns a dropout layer; P = 0 makes it the identity.
func NewDropout(g *graph.Graph, name string, p float64) (*Dropout, error) {
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("nn.Dropout %q: p = %v, want 0 ≤ p < 1", name, p)
	}
	return &Dropout{Name: name, P: p, g: g}, nil
}

// Forward applies dropout to x.
func (d *Dropout) Forward(x *G.Node) (*G.Node, error) {
	if d.P == 0 {
		return x, nil
	}
	return fused.Dropout(x, d.P, d.g.Seed(), d.Name, d.g)
}
