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

// apply adds the gate's nonlinearity to the graph; gateRows is the same
// on plain rows (the key-value cache).
func (g Gate) apply(x *G.Node) (*G.Node, error) {
	if g.sigmoid {
		return fused.Sigmoid(x)
	}
	return g.act.Apply(x)
}

func gateRows[T graph.Float](g Gate, x []T) error {
	if g.sigmoid {
		sigmoid(x)
		return nil
	}
	return activation.Forward(g.act, x, x)
}

// validate checks a gate's activation.
func (g Gate) validate() error {
	if g.IsZero() || g.sigmoid {
		return nil
	}
	return g.act.Validate()
}

// arg names the gate for Args: "glu:<activation>" ("glu:sigmoid" for GLU),
// so that GEGLU and GateOf(activation.GELU) have one name.
func (g Gate) arg() string {
	if g.sigmoid {
		return "glu:sigmoid"
	}
	return "glu:" + g.act.Name()
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

// MLPBlock is the position-wise feed-forward layer without norm and
// residual, named as nanoGPT's MLP:
//
//	ungated: Drop(c_proj(act(c_fc(x))))
//	gated:   Drop(c_proj(gate(c_fc(x)) ⊙ c_up(x)))
//
// It is the one feed-forward implementation of the package: Block adds a
// norm and a residual around it, FeedForward does the same under BERT's
// names (fc1, fc2), and the key-value cache runs it on plain rows
// (mlpRows, beside Forward here).
type MLPBlock struct {
	Name   string
	Config MLPBlockConfig // Hidden resolved
	// CFC, CUp and CProj are c_fc, c_up and c_proj (a FeedForward's fc1,
	// –, fc2); CUp is nil when ungated.
	CFC, CUp, CProj *Linear
	Drop            *Dropout
	// Hidden is the last Forward's pre-activation node CFC(x) (rows ×
	// Hidden), for probes such as dead-unit counts (see graph.Keep).
	Hidden *G.Node
	act    activation.Activation
}

// mlpNames are the names of an MLPBlock's Linears.
type mlpNames struct{ in, up, out string }

var nanoGPTMLP = mlpNames{"c_fc", "c_up", "c_proj"}

// NewMLPBlock adds "<name>.c_fc", ["<name>.c_up",] "<name>.c_proj" to g.
func NewMLPBlock(g *graph.Graph, name string, cfg MLPBlockConfig) (*MLPBlock, error) {
	return newMLPBlock(g, name, cfg, nanoGPTMLP)
}

func newMLPBlock(g *graph.Graph, name string, cfg MLPBlockConfig, names mlpNames) (*MLPBlock, error) {
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
	if err := cfg.Gate.validate(); err != nil {
		return nil, fmt.Errorf("nn.MLPBlock %q: gate: %w", name, err)
	}
	var err error
	in, proj := linearOpts(cfg.NoBias, cfg.WeightInit), linearOpts(cfg.NoBias, cfg.ProjInit)
	if m.CFC, err = NewLinear(g, join(name, names.in), cfg.Dim, cfg.Hidden, in...); err != nil {
		return nil, err
	}
	if !cfg.Gate.IsZero() {
		if m.CUp, err = NewLinear(g, join(name, names.up), cfg.Dim, cfg.Hidden, in...); err != nil {
			return nil, err
		}
	}
	if m.CProj, err = NewLinear(g, join(name, names.out), cfg.Hidden, cfg.Dim, proj...); err != nil {
		return nil, err
	}
	if m.Drop, err = NewDropout(g, join(name, "dropout"), cfg.Dropout); err != nil {
		return nil, err
	}
	return m, nil
}

// linearOpts turns a block's bias flag and weight init into Linear options;
// a replaced weight init comes with zero biases (GPT-2's convention).
func linearOpts(noBias bool, w graph.Init) []Option {
	var opts []Option
	if noBias {
		opts = append(opts, NoBias())
	}
	if w != nil {
		opts = append(opts, WeightInit(w))
		if !noBias {
			opts = append(opts, BiasInit(graph.Zeros()))
		}
	}
	return opts
}

// Forward maps x (rows × Dim) to (rows × Dim).
func (m *MLPBlock) Forward(x *G.Node) (*G.Node, error) {
	if m == nil || m.CFC == nil || m.CProj == nil {
		return nil, fmt.Errorf("nn.MLPBlock: not built, want one made by nn.NewMLPBlock")
	}
	h, err := m.CFC.Forward(x)
	if err != nil {
		return nil, fmt.Errorf("nn.MLPBlock %q: %w", m.Name, err)
	}
	m.Hidden = h
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

// mlpWeights are an MLPBlock's parameter tensors as slices (nil for an
// absent bias or c_up).
type mlpWeights[T graph.Float] struct{ fcW, fcB, upW, upB, outW, outB []T }

// mlpRows is m's Forward on k rows h (k × Dim) in plain Go, into out
// (k × Dim), for the key-value cache: the same arithmetic as the graph's
// ops (fused.Linear's GEMM with the bias copied in, activation.Forward,
// σ as fused.Sigmoid), without dropout (inference). ff and up are scratch
// space of k × Hidden.
func mlpRows[T graph.Float](m *MLPBlock, w *mlpWeights[T], out, h, ff, up []T, k int) error {
	d, hidden := m.Config.Dim, m.Config.Hidden
	if err := linear(ff, h, w.fcW, w.fcB, k, hidden, d); err != nil {
		return fmt.Errorf("nn.MLPBlock %q: c_fc: %w", m.Name, err)
	}
	if m.CUp == nil {
		if err := activation.Forward(m.act, ff, ff); err != nil {
			return fmt.Errorf("nn.MLPBlock %q: %w", m.Name, err)
		}
	} else {
		if err := linear(up, h, w.upW, w.upB, k, hidden, d); err != nil {
			return fmt.Errorf("nn.MLPBlock %q: c_up: %w", m.Name, err)
		}
		if err := gateRows(m.Config.Gate, ff); err != nil {
			return fmt.Errorf("nn.MLPBlock %q: gate: %w", m.Name, err)
		}
		for j := range ff {
			ff[j] *= up[j]
		}
	}
	if err := linear(out, ff, w.outW, w.outB, k, d, hidden); err != nil {
		return fmt.Errorf("nn.MLPBlock %q: c_proj: %w", m.Name, err)
	}
	return nil
}

// Parameters returns c_fc's, c_up's and c_proj's.
func (m *MLPBlock) Parameters() []*G.Node {
	if m == nil {
		return nil
	}
	return params(m.CFC, m.CUp, m.CProj)
}

// Prefix returns Name, the prefix of the parameters' names.
func (m *MLPBlock) Prefix() string {
	if m == nil {
		return ""
	}
	return m.Name
}

// Args returns dim, hidden, the activation or gate, and bias.
func (m *MLPBlock) Args() map[string]string {
	if m == nil {
		return nil
	}
	a := map[string]string{"dim": itoa(m.Config.Dim), "hidden": itoa(m.Config.Hidden), "bias": btoa(!m.Config.NoBias)}
	addMLPKind(a, m.act, m.Config.Gate)
	return a
}

// addMLPKind records an MLP's nonlinearity: "gate" for a gated one (its
// activation is unused then), "activation" otherwise.
func addMLPKind(a map[string]string, act activation.Activation, gate Gate) {
	if gate.IsZero() {
		a["activation"] = orDefault(act).Name()
	} else {
		a["gate"] = gate.arg()
	}
}
