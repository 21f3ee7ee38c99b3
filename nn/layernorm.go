package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// LayerNorm normalizes over the last dimension (torch.nn.LayerNorm(dim)):
// Weight (γ, init 1) and Bias (β, init 0), or neither without affine.
type LayerNorm struct {
	Name         string
	Dim          int
	Eps          float64
	Weight, Bias *G.Node
}

// LayerNormOption changes how NewLayerNorm builds the layer.
type LayerNormOption func(*layerNormConfig)

type layerNormConfig struct {
	eps    float64
	affine bool
}

// defaultEps is PyTorch's LayerNorm ε.
const defaultEps = 1e-5

// orDefaultEps returns eps, or defaultEps for 0: the meaning of a zero Eps
// in the configurations of the layers that hold LayerNorms.
func orDefaultEps(eps float64) float64 {
	if eps == 0 {
		return defaultEps
	}
	return eps
}

// Eps sets ε (default 1e-5, as PyTorch; BERT uses 1e-12).
func Eps(eps float64) LayerNormOption { return func(c *layerNormConfig) { c.eps = eps } }

// NoAffine leaves out γ and β (elementwise_affine=False).
func NoAffine() LayerNormOption { return func(c *layerNormConfig) { c.affine = false } }

// NewLayerNorm adds "<name>.weight" and "<name>.bias" (dim) to g.
func NewLayerNorm(g *graph.Graph, name string, dim int, opts ...LayerNormOption) (*LayerNorm, error) {
	cfg := layerNormConfig{eps: defaultEps, affine: true}
	for _, o := range opts {
		o(&cfg)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("nn.LayerNorm %q: dim = %d, want > 0", name, dim)
	}
	if !(cfg.eps >= 0) {
		return nil, fmt.Errorf("nn.LayerNorm %q: eps = %v, want ≥ 0", name, cfg.eps)
	}
	ln := &LayerNorm{Name: name, Dim: dim, Eps: cfg.eps}
	if cfg.affine {
		var err error
		if ln.Weight, err = g.Param(join(name, "weight"), graph.Constant(1), dim); err != nil {
			return nil, fmt.Errorf("nn.LayerNorm: %w", err)
		}
		if ln.Bias, err = g.Param(join(name, "bias"), graph.Zeros(), dim); err != nil {
			return nil, fmt.Errorf("nn.LayerNorm: %w", err)
		}
	}
	return ln, nil
}

// Forward normalizes each row of x (rows × Dim).
func (ln *LayerNorm) Forward(x *G.Node) (*G.Node, error) {
	if x == nil || x.Dims() != 2 || x.Shape()[1] != ln.Dim {
		return nil, fmt.Errorf("nn.LayerNorm %q: input has shape %v, want (rows, %d)", ln.Name, shapeOf(x), ln.Dim)
	}
	return fused.LayerNorm(x, ln.Weight, ln.Bias, ln.Eps)
}

func shapeOf(n *G.Node) any {
	if n == nil {
		return "nil"
	}
	return n.Shape()
}
