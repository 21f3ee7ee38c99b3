package nn

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// Linear is y = x·Wᵀ + b (torch.nn.Linear). Weight is (Out, In), Bias (Out)
// or nil.
type Linear struct {
	Name         string
	In, Out      int
	Weight, Bias *G.Node
}

// LinearOption changes how NewLinear builds the layer.
type LinearOption func(*linearConfig)

type linearConfig struct {
	bias               bool
	weightInit, biasIn graph.Init
}

// NoBias leaves out the bias (bias=False).
func NoBias() LinearOption { return func(c *linearConfig) { c.bias = false } }

// WeightInit replaces PyTorch's default weight initialization.
func WeightInit(init graph.Init) LinearOption { return func(c *linearConfig) { c.weightInit = init } }

// BiasInit replaces PyTorch's default bias initialization.
func BiasInit(init graph.Init) LinearOption { return func(c *linearConfig) { c.biasIn = init } }

// NewLinear adds the parameters "<name>.weight" (out×in) and "<name>.bias"
// (out) to g. By default both are drawn from U(−1/√in, 1/√in), PyTorch's
// default for nn.Linear.
func NewLinear(g *graph.Graph, name string, in, out int, opts ...LinearOption) (*Linear, error) {
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("nn.Linear %q: in = %d, out = %d, want both > 0", name, in, out)
	}
	bound := 1 / math.Sqrt(float64(in))
	cfg := linearConfig{bias: true, weightInit: graph.Uniform(-bound, bound), biasIn: graph.Uniform(-bound, bound)}
	for _, o := range opts {
		o(&cfg)
	}
	l := &Linear{Name: name, In: in, Out: out}
	var err error
	if l.Weight, err = g.Param(join(name, "weight"), cfg.weightInit, out, in); err != nil {
		return nil, fmt.Errorf("nn.Linear: %w", err)
	}
	if cfg.bias {
		if l.Bias, err = g.Param(join(name, "bias"), cfg.biasIn, out); err != nil {
			return nil, fmt.Errorf("nn.Linear: %w", err)
		}
	}
	return l, nil
}

// Forward maps x (rows × In) to (rows × Out).
func (l *Linear) Forward(x *G.Node) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("nn.Linear %q: input is nil", l.Name)
	}
	if x.Dims() != 2 || x.Shape()[1] != l.In {
		return nil, fmt.Errorf("nn.Linear %q: input %q has shape %v, want (rows, %d)", l.Name, x.Name(), x.Shape(), l.In)
	}
	return fused.Linear(x, l.Weight, l.Bias)
}
