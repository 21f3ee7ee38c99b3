package nn

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
)

// MLPConfig describes a multilayer perceptron.
type MLPConfig struct {
	In     int   // input features
	Hidden []int // widths of the hidden layers (the GELU paper's MNIST net: eight of 128)
	Out    int   // outputs (logits)
	// Activation after every hidden layer; the zero value is exact GELU.
	Activation activation.Activation
	// Dropout after every hidden activation; 0 disables it.
	Dropout float64
	// WeightInit and BiasInit replace PyTorch's Linear defaults, e.g.
	// graph.UnitNormRows() and graph.Zeros() for the GELU paper's setup.
	WeightInit, BiasInit graph.Init
}

// MLP is Linear → act → dropout repeated over the hidden layers, then a
// final Linear: parameters "<name>.layers.<i>.weight" and ".bias".
type MLP struct {
	Name   string // the prefix of the parameters' names
	Config MLPConfig
	Layers []*Linear
	Drops  []*Dropout
	// Pre holds the last Forward's hidden pre-activation nodes, one per
	// hidden layer (rows × width), for probes (see graph.Keep).
	Pre []*G.Node
}

// NewMLP adds the network's parameters to g under name.
func NewMLP(g *graph.Graph, name string, cfg MLPConfig) (*MLP, error) {
	if cfg.In <= 0 || cfg.Out <= 0 {
		return nil, fmt.Errorf("nn.MLP %q: In = %d, Out = %d, want both > 0", name, cfg.In, cfg.Out)
	}
	cfg.Activation = orDefault(cfg.Activation)
	if err := cfg.Activation.Validate(); err != nil {
		return nil, fmt.Errorf("nn.MLP %q: %w", name, err)
	}
	var opts []Option
	if cfg.WeightInit != nil {
		opts = append(opts, WeightInit(cfg.WeightInit))
	}
	if cfg.BiasInit != nil {
		opts = append(opts, BiasInit(cfg.BiasInit))
	}
	m := &MLP{Name: name, Config: cfg}
	widths := append(append([]int{cfg.In}, cfg.Hidden...), cfg.Out)
	for i := 0; i+1 < len(widths); i++ {
		if widths[i+1] <= 0 {
			return nil, fmt.Errorf("nn.MLP %q: layer %d has width %d, want > 0", name, i, widths[i+1])
		}
		l, err := NewLinear(g, fmt.Sprintf("%s.%d", join(name, "layers"), i), widths[i], widths[i+1], opts...)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, l)
		if i+2 < len(widths) {
			d, err := NewDropout(g, fmt.Sprintf("%s.%d", join(name, "dropout"), i), cfg.Dropout)
			if err != nil {
				return nil, err
			}
			m.Drops = append(m.Drops, d)
		}
	}
	return m, nil
}

// Forward maps x (rows × In) to logits (rows × Out) and records the hidden
// pre-activations in m.Pre.
func (m *MLP) Forward(x *G.Node) (*G.Node, error) {
	if m == nil || len(m.Layers) == 0 || len(m.Drops) != len(m.Layers)-1 {
		return nil, fmt.Errorf("nn.MLP: nil or unbuilt MLP, want one made by nn.NewMLP")
	}
	// A fresh slice: a caller may still hold the previous Forward's nodes.
	m.Pre = make([]*G.Node, 0, len(m.Layers)-1)
	h := x
	for i, l := range m.Layers {
		z, err := l.Forward(h)
		if err != nil {
			return nil, err
		}
		if i == len(m.Layers)-1 {
			return z, nil
		}
		m.Pre = append(m.Pre, z)
		if h, err = m.Config.Activation.Apply(z); err != nil {
			return nil, err
		}
		if h, err = m.Drops[i].Forward(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Parameters returns the Linears' parameters in order.
func (m *MLP) Parameters() []*G.Node {
	if m == nil {
		return nil
	}
	parts := make([]any, len(m.Layers))
	for i, l := range m.Layers {
		parts[i] = l
	}
	return params(parts...)
}

// Prefix returns Name, the prefix of the parameters' names.
func (m *MLP) Prefix() string {
	if m == nil {
		return ""
	}
	return m.Name
}

// Args returns in, hidden (the widths, comma-separated), out and the
// activation (not Dropout, nor the inits).
func (m *MLP) Args() map[string]string {
	if m == nil {
		return nil
	}
	w := make([]string, len(m.Config.Hidden))
	for i, h := range m.Config.Hidden {
		w[i] = itoa(h)
	}
	return map[string]string{"in": itoa(m.Config.In), "hidden": strings.Join(w, ","), "out": itoa(m.Config.Out),
		"activation": orDefault(m.Config.Activation).Name()}
}
