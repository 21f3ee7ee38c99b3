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

// NewLinear adds the parameters "<name>.weight" (out×in) and "<name>.bias"
// (out) to g. By default both are drawn from U(−1/√in, 1/√in), PyTorch's
// default for nn.Linear. Options: NoBias, WeightInit, BiasInit.
func NewLinear(g *graph.Graph, name string, in, out int, opts ...Option) (*Linear, error) {
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("nn.Linear %q: in = %d, out = %d, want both > 0", name, in, out)
	}
	bound := 1 / math.Sqrt(float64(in))
	o, err := applyOptions(options{layer: "Linear", bias: true, weightInit: graph.Uniform(-bound, bound), biasInit: graph.Uniform(-bound, bound)}, name, opts)
	if err != nil {
		return nil, err
	}
	l := &Linear{Name: name, In: in, Out: out}
	if l.Weight, err = g.Param(join(name, "weight"), o.weightInit, out, in); err != nil {
		return nil, fmt.Errorf("nn.Linear: %w", err)
	}
	if o.bias {
		if l.Bias, err = g.Param(join(name, "bias"), o.biasInit, out); err != nil {
			return nil, fmt.Errorf("nn.Linear: %w", err)
		}
	}
	return l, nil
}

// Forward maps x (rows × In) to (rows × Out).
func (l *Linear) Forward(x *G.Node) (*G.Node, error) {
	if l == nil || l.Weight == nil {
		return nil, fmt.Errorf("nn.Linear: not built, want one made by nn.NewLinear")
	}
	if x == nil {
		return nil, fmt.Errorf("nn.Linear %q: input is nil", l.Name)
	}
	if x.Dims() != 2 || x.Shape()[1] != l.In {
		return nil, fmt.Errorf("nn.Linear %q: input %q has shape %v, want (rows, %d)", l.Name, x.Name(), x.Shape(), l.In)
	}
	return fused.Linear(x, l.Weight, l.Bias)
}

// Parameters returns Weight and, if present, Bias.
func (l *Linear) Parameters() []*G.Node {
	if l == nil {
		return nil
	}
	return params(l.Weight, l.Bias)
}

// Prefix returns Name, the prefix of the parameters' names.
func (l *Linear) Prefix() string {
	if l == nil {
		return ""
	}
	return l.Name
}

// Args returns in, out and bias.
func (l *Linear) Args() map[string]string {
	if l == nil {
		return nil
	}
	return map[string]string{"in": itoa(l.In), "out": itoa(l.Out), "bias": btoa(l.Bias != nil)}
}
