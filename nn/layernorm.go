package nn

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNorm normalizes over the last dimension (torch.nn.LayerNorm(dim)):
// y = γ·x̂ + β with Weight γ (init 1) and Bias β (init 0); with NoBias,
// y = γ·x̂ (torch's bias=False, nanoGPT's LayerNorm(bias=False)); with
// NoAffine, y = x̂.
type LayerNorm struct {
	Name         string
	Dim          int
	Eps          float64 // ε; 0 means PyTorch's 1e-5
	Weight, Bias *G.Node // γ and β; nil when left out
	// zero stands for β without bias: the fused op takes γ and β together,
	// and γ·x̂ + 0 is γ·x̂ exactly. A constant, not a parameter.
	zero *G.Node
}

// defaultEps is PyTorch's LayerNorm ε.
const defaultEps = 1e-5

// orDefaultEps returns eps, or defaultEps for 0: the meaning of a zero ε
// everywhere in this package (the Eps option and every config's Eps).
func orDefaultEps(eps float64) float64 {
	if eps == 0 {
		return defaultEps
	}
	return eps
}

// NewLayerNorm adds "<name>.weight" and "<name>.bias" (dim) to g. Options:
// Eps, NoBias, NoAffine.
func NewLayerNorm(g *graph.Graph, name string, dim int, opts ...Option) (*LayerNorm, error) {
	o, err := applyOptions(options{layer: "LayerNorm", bias: true, affine: true}, name, opts)
	if err != nil {
		return nil, err
	}
	if dim <= 0 {
		return nil, fmt.Errorf("nn.LayerNorm %q: dim = %d, want > 0", name, dim)
	}
	if !(o.eps >= 0) || math.IsInf(o.eps, 0) {
		return nil, fmt.Errorf("nn.LayerNorm %q: eps = %v, want a finite ε > 0 (0 means 1e-5)", name, o.eps)
	}
	ln := &LayerNorm{Name: name, Dim: dim, Eps: orDefaultEps(o.eps)}
	if !o.affine {
		return ln, nil
	}
	if ln.Weight, err = g.Param(join(name, "weight"), graph.Constant(1), dim); err != nil {
		return nil, fmt.Errorf("nn.LayerNorm: %w", err)
	}
	if o.bias {
		if ln.Bias, err = g.Param(join(name, "bias"), graph.Zeros(), dim); err != nil {
			return nil, fmt.Errorf("nn.LayerNorm: %w", err)
		}
		return ln, nil
	}
	zero := tensor.New(tensor.Of(g.Dtype()), tensor.WithShape(dim))
	if ln.zero, err = constant(g, join(name, "bias(none)"), zero); err != nil {
		return nil, fmt.Errorf("nn.LayerNorm %q: %w", name, err)
	}
	return ln, nil
}

// Forward normalizes each row of x (rows × Dim).
func (ln *LayerNorm) Forward(x *G.Node) (*G.Node, error) {
	if ln == nil || ln.Dim <= 0 || (ln.Weight != nil && ln.Bias == nil && ln.zero == nil) {
		return nil, fmt.Errorf("nn.LayerNorm: not built, want one made by nn.NewLayerNorm")
	}
	if x == nil || x.Dims() != 2 || x.Shape()[1] != ln.Dim {
		return nil, fmt.Errorf("nn.LayerNorm %q: input has shape %v, want (rows, %d)", ln.Name, shapeOf(x), ln.Dim)
	}
	beta := ln.Bias
	if beta == nil {
		beta = ln.zero
	}
	return fused.LayerNorm(x, ln.Weight, beta, orDefaultEps(ln.Eps))
}

// Parameters returns Weight and Bias, those present.
func (ln *LayerNorm) Parameters() []*G.Node {
	if ln == nil {
		return nil
	}
	return params(ln.Weight, ln.Bias)
}

// Prefix returns Name, the prefix of the parameters' names.
func (ln *LayerNorm) Prefix() string {
	if ln == nil {
		return ""
	}
	return ln.Name
}

// Args returns dim, eps, affine and bias.
func (ln *LayerNorm) Args() map[string]string {
	if ln == nil {
		return nil
	}
	return map[string]string{"dim": itoa(ln.Dim), "eps": ftoa(orDefaultEps(ln.Eps)), "affine": btoa(ln.Weight != nil), "bias": btoa(ln.Bias != nil)}
}

// constant adds a node holding v that is neither an input nor a parameter.
func constant(g *graph.Graph, name string, v *tensor.Dense) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("constant %q: %v", name, r)
		}
	}()
	return G.NewTensor(g.ExprGraph(), v.Dtype(), v.Dims(), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v)), nil
}

func shapeOf(n *G.Node) any {
	if n == nil {
		return "nil"
	}
	return n.Shape()
}
