package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// Embedding is a lookup table of Num vectors of size Dim
// (torch.nn.Embedding); Weight is (Num, Dim), initialized from N(0, 1).
type Embedding struct {
	Name     string
	Num, Dim int
	Weight   *G.Node
}

// NewEmbedding adds "<name>.weight" (num×dim) to g. Option: WeightInit.
func NewEmbedding(g *graph.Graph, name string, num, dim int, opts ...Option) (*Embedding, error) {
	if num <= 0 || dim <= 0 {
		return nil, fmt.Errorf("nn.Embedding %q: num = %d, dim = %d, want both > 0", name, num, dim)
	}
	o, err := applyOptions(options{layer: "Embedding", weightInit: graph.Normal(0, 1)}, name, opts)
	if err != nil {
		return nil, err
	}
	w, err := g.Param(join(name, "weight"), o.weightInit, num, dim)
	if err != nil {
		return nil, fmt.Errorf("nn.Embedding: %w", err)
	}
	return &Embedding{Name: name, Num: num, Dim: dim, Weight: w}, nil
}

// Forward looks up idx (rows × k integer indices stored as floats) and
// returns the k vectors of each row concatenated: (rows × k·Dim).
func (e *Embedding) Forward(idx *G.Node) (*G.Node, error) {
	if e == nil || e.Weight == nil {
		return nil, fmt.Errorf("nn.Embedding: not built, want one made by nn.NewEmbedding")
	}
	if idx == nil || idx.Dims() != 2 {
		return nil, fmt.Errorf("nn.Embedding %q: indices have shape %v, want (rows, k)", e.Name, shapeOf(idx))
	}
	return fused.Embedding(idx, e.Weight)
}

// Parameters returns Weight.
func (e *Embedding) Parameters() []*G.Node {
	if e == nil {
		return nil
	}
	return params(e.Weight)
}

// Prefix returns Name, the prefix of the parameter's name.
func (e *Embedding) Prefix() string {
	if e == nil {
		return ""
	}
	return e.Name
}

// Args returns num and dim.
func (e *Embedding) Args() map[string]string {
	if e == nil {
		return nil
	}
	return map[string]string{"num": itoa(e.Num), "dim": itoa(e.Dim)}
}
