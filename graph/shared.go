package graph

// Support for layers that run in a graph of their own on another graph's
// parameters (nn.Stack's recomputed blocks): a parameter made from a tensor
// the caller already has, and a renaming of the random streams that
// stochastic ops draw from.

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AddParam adds the trainable parameter name with the value v, used in
// place (not copied): an optimizer step on g updates v, and every graph
// that holds v sees the update. v must have g's dtype and a valid shape.
func (g *Graph) AddParam(name string, v *tensor.Dense) (*G.Node, error) {
	if v == nil {
		return nil, fmt.Errorf("graph.AddParam %q: nil tensor", name)
	}
	if err := g.checkNew("AddParam", name, v.Shape()); err != nil {
		return nil, err
	}
	if v.Dtype() != g.dtype {
		return nil, fmt.Errorf("graph.AddParam %q: dtype %v, want the graph's %v", name, v.Dtype(), g.dtype)
	}
	return g.add(&g.params, name, v.Shape(), v)
}

// SetStreamNames makes StreamName map names through f (nil: the identity).
// A block built once and run for several blocks of a model sets it before
// each run, so that its dropout draws the masks of the block it stands for.
func (g *Graph) SetStreamNames(f func(string) string) { g.streams = f }

// StreamName returns the name of the random stream a stochastic op called
// name draws from in the current run: name itself, unless SetStreamNames
// maps it.
func (g *Graph) StreamName(name string) string {
	if g.streams == nil {
		return name
	}
	return g.streams(name)
}
