package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// Dropout zeroes elements with probability P while the graph is in training
// mode (graph.SetTraining) and is the identity in evaluation. Masks depend
// on the graph's seed, the layer's name and the graph's step. The zero
// Dropout (P = 0) is the identity; one with P > 0 needs its graph and name,
// so it comes from NewDropout.
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
	if x == nil {
		return nil, fmt.Errorf("nn.Dropout: input is nil")
	}
	if d == nil || d.P == 0 {
		return x, nil
	}
	if !(d.P > 0 && d.P < 1) {
		return nil, fmt.Errorf("nn.Dropout %q: P = %v, want 0 ≤ P < 1", d.Name, d.P)
	}
	if d.g == nil {
		return nil, fmt.Errorf("nn.Dropout %q: P = %v without a graph, want one made by nn.NewDropout", d.Name, d.P)
	}
	return fused.Dropout(x, d.P, d.g.Seed(), d.Name, d.g)
}

// Parameters returns none: dropout has no parameters.
func (d *Dropout) Parameters() []*G.Node { return nil }

// Prefix returns Name.
func (d *Dropout) Prefix() string {
	if d == nil {
		return ""
	}
	return d.Name
}
