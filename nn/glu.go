package nn

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// Gate is the nonlinearity of a gated feed-forward layer (Shazeer 2020,
// "GLU Variants Improve Transformer"): act(x·W) ⊙ (x·V). The zero Gate
// means "no gate" where a config takes one.
type Gate struct {
	name    string
	act     activation.Activation
	sigmoid bool
}

// The gates of Shazeer's paper. GLU's gate is the logistic sigmoid;
// GEGLU uses exact GELU and GEGLUTanh its tanh form.
var (
	GLU       = Gate{name: "GLU", sigmoid: true}
	GEGLU     = Gate{name: "GEGLU", act: activation.GELU}
	GEGLUTanh = Gate{name: "GEGLU (tanh)", act: activation.GELUTanh}
	SwiGLU    = Gate{name: "SwiGLU", act: activation.SiLU}
	ReGLU     = Gate{name: "ReGLU", act: activation.ReLU}
)

// GateOf returns the gate act(x·W) ⊙ (x·V) for any activation.
func GateOf(a activation.Activation) Gate { return Gate{name: a.Name() + " GLU", act: a} }

// IsZero reports whether g is the zero Gate (an ungated layer).
func (g Gate) IsZero() bool { return g.name == "" }

func (g Gate) String() string {
	if g.IsZero() {
		return "ungated"
	}
	return g.name
}

func (g Gate) apply(x *G.Node) (*G.Node, error) {
	if g.sigmoid {
		return fused.Sigmoid(x)
	}
	return g.act.Apply(x)
}

// GatedHidden is the inner width of a gated layer with as many weights as
// an ungated one of width hidden: two d×h input matrices instead of one,
// so h = 2·hidden/3 (rounded), as in Shazeer's paper.
func GatedHidden(hidden int) int { return int(math.Round(2 * float64(hidden) / 3)) }

// MLPBlockConfig describes the feed-forward sublayer of a Transformer block.
type MLPBlockConfig struct {
	Dim    int // model width d
	Hidden int // inner width (0: 4·Dim ungated, GatedHidden(4·Dim) gated)
	// Activation of the ungated layer; the zero value is exact GELU
	// (nanoGPT's nn.GELU()).
	Activation activation.Activation
	// Gate selects a gated layer (GLU, GEGLU, SwiGLU, ReGLU, GateOf(...));
	// the zero Gate is the ungated c_fc → act → c_proj.
	Gate    Gate
	Dropout float64 // after c_proj (nanoGPT's MLP dropout); 0 disables it
	NoBias  bool    // Linears without bias (nanoGPT's bias=False)
	// WeightInit and ProjInit replace PyTorch's default init of the input
	// Linears' and of c_proj's weights (GPT uses N(0, 0.02) and
	// N(0, 0.02/√(2·layers))); biases are then zero.
	WeightInit, ProjInit graph.Init
}

// MLPBlock is the position-wise feed-forward sublayer without its norm and
// residual (the Block adds those), named as nanoGPT's MLP:
//
//	ungated: Drop(c_proj(act(c_fc(x))))
//	gated:   Drop(c_proj(gate(c_fc(x)) ⊙ c_up(x)))
type MLPBlock struct {
	Name            string
	Config          MLPBlockConfig
	CFC, CUp, CProj *Linear // CUp is nil when ungated
	Drop            *Dropout
	act             activation.Activation
}

// NewMLPBlock adds "<name>.c_fc", ["<name>.c_up",] "<name>.c_proj" to g.
func NewMLPBlock(g *graph.Graph, name string, cfg MLPBlockConfig) (*MLPBlock, error) {
	if cfg.Dim <= 0 || cfg.Hidden < 0 {
		return nil, fmt.Errorf("nn.MLPBlock %q: Dim = %d, Hidden = %d, want Dim > 0 and Hidden ≥ 0", name, cfg.Dim, cfg.Hidden)
	}
	if cfg.Hidden == 0 {
		cfg.Hidden = 4 * cfg.Dim
		if !cfg.Gate.IsZero() {
			cfg.Hidden = GatedHidden(cfg.Hidden)
		}
	}
	m := &MLPBlock{Name: name, Config: cfg, act: orDefault(cfg.Activation)}
	if err := m.act.Validate(); err != nil {
		return nil, fmt.Errorf("nn.MLPBlock %q: %w", name, err)
	}
	if !cfg.Gate.IsZero() && !cfg.Gate.sigmoid {
		if err := cfg.Gate.act.Validate(); err != nil {
			return nil, fmt.Errorf("nn.MLPBlock %q: gate: %w", name, err)
		}
	}
	var err error
	in, proj := linearOpts(cfg.NoBias, cfg.WeightInit), linearOpts(cfg.NoBias, cfg.ProjInit)
	if m.CFC, err = NewLinear(g, join(name, "c_fc"), cfg.Dim, cfg.Hidden, in...); err != nil {
		return nil, err
	}
	if !cfg.Gate.IsZero() {
		if m.CUp, err = NewLinear(g, join(name, "c_up"), cfg.Dim, cfg.Hidden, in...); err != nil {
			return nil, err
		}
	}
	if m.CProj, err = NewLinear(g, join(name, "c_proj"), cfg.Hidden, cfg.Dim, proj...); err != nil {
		return nil, err
	}
	if m.Drop, err = NewDropout(g, join(name, "dropout"), cfg.Dropout); err != nil {
		return nil, err
	}
	return m, nil
}

// linearOpts turns a block's bias flag and weight init into Linear options;
// a replaced weight init comes with zero biases (GPT-2's convention).
func linearOpts(noBias bool, w graph.Init) []LinearOption {
	var opts []LinearOption
	if noBias {
		opts = append(opts, NoBias())
	}
	if w != nil {
		opts = append(opts, WeightInit(w), BiasInit(graph.Zeros()))
	}
	return opts
}

// Forward maps x (rows × Dim) to (rows × Dim).
func (m *MLPBlock) Forward(x *G.Node) (*G.Node, error) {
	h, err := m.CFC.Forward(x)
	if err != nil {
		return nil, fmt.Errorf("nn.MLPBlock %q: %w", m.Name, err)
	}
	if m.CUp == nil {
		h, err = m.act.Apply(h)
	} else {
		var up *G.Node
		if h, err = m.Config.Gate.apply(h); err == nil {
			if up, err = m.CUp.Forward(x); err == nil {
				h, err = fused.Mul(h, up)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nn.MLPBlock %q: %w", m.Name, err)
	}
	if h, err = m.CProj.Forward(h); err != nil {
		return nil, err
	}
	return m.Drop.Forward(h)
}
