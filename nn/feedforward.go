package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// FeedForwardConfig describes a Transformer feed-forward block.
type FeedForwardConfig struct {
	Dim    int // model width d (BERT-base and GPT-2 small: 768)
	Hidden int // inner width d_ff; 0 means 4·Dim (BERT-base: 3072)
	// Activation between the two Linears; the zero value is exact GELU
	// (BERT, GPT-2 and ViT use GELU; GPT-2's code uses the tanh form).
	Activation activation.Activation
	// Dropout after the second Linear (as nanoGPT's MLP); 0 disables it.
	Dropout float64
	// PostLN selects the original Transformer/BERT order LN(x + FFN(x));
	// the default is pre-LN, x + FFN(LN(x)) (GPT-2, ViT).
	PostLN bool
	// NoResidual drops the skip connection (then pre-LN is FFN(LN(x)) and
	// post-LN is LN(FFN(x))).
	NoResidual bool
	// Eps of the LayerNorm; 0 means PyTorch's 1e-5.
	Eps float64
}

// FeedForward is the position-wise block
//
//	pre-LN:  y = x + Drop(FC2(act(FC1(LN(x)))))
//	post-LN: y = LN(x + Drop(FC2(act(FC1(x)))))
//
// with parameters "<name>.ln.*", "<name>.fc1.*", "<name>.fc2.*": a
// LayerNorm and an MLPBlock under BERT's names.
type FeedForward struct {
	Name   string
	Config FeedForwardConfig // Hidden and Eps resolved
	LN     *LayerNorm
	// MLP is FC2(act(FC1(·))) with its dropout; its CFC is fc1, CProj
	// fc2, and MLP.Hidden the last Forward's pre-activation FC1(...) (rows
	// × Hidden), for probes such as dead-unit counts (see graph.Keep).
	MLP *MLPBlock
}

// NewFeedForward adds the block's parameters to g under name.
func NewFeedForward(g *graph.Graph, name string, cfg FeedForwardConfig) (*FeedForward, error) {
	if cfg.Dim <= 0 || cfg.Hidden < 0 {
		return nil, fmt.Errorf("nn.FeedForward %q: Dim = %d, Hidden = %d, want Dim > 0 and Hidden ≥ 0", name, cfg.Dim, cfg.Hidden)
	}
	if cfg.Hidden == 0 {
		cfg.Hidden = 4 * cfg.Dim
	}
	cfg.Activation = orDefault(cfg.Activation)
	if err := cfg.Activation.Validate(); err != nil {
		return nil, fmt.Errorf("nn.FeedForward %q: %w", name, err)
	}
	cfg.Eps = orDefaultEps(cfg.Eps)
	f := &FeedForward{Name: name, Config: cfg}
	var err error
	if f.LN, err = NewLayerNorm(g, join(name, "ln"), cfg.Dim, Eps(cfg.Eps)); err != nil {
		return nil, err
	}
	if f.MLP, err = newMLPBlock(g, name, MLPBlockConfig{Dim: cfg.Dim, Hidden: cfg.Hidden, Activation: cfg.Activation, Dropout: cfg.Dropout},
		mlpNames{in: "fc1", out: "fc2"}); err != nil {
		return nil, err
	}
	return f, nil
}

// Forward applies the block to x (rows × Dim).
func (f *FeedForward) Forward(x *G.Node) (*G.Node, error) {
	if f == nil || f.LN == nil || f.MLP == nil {
		return nil, fmt.Errorf("nn.FeedForward: not built, want one made by nn.NewFeedForward")
	}
	return residual(x, f.LN, f.MLP.Forward, f.Config.PostLN, f.Config.NoResidual)
}

// residual is the sublayer pattern of every Transformer block here:
// x + f(ln(x)) (pre-LN) or ln(x + f(x)) (post-LN), without the "x +" if
// noSkip.
func residual(x *G.Node, ln *LayerNorm, f func(*G.Node) (*G.Node, error), post, noSkip bool) (*G.Node, error) {
	h := x
	var err error
	if !post {
		if h, err = ln.Forward(h); err != nil {
			return nil, err
		}
	}
	if h, err = f(h); err != nil {
		return nil, err
	}
	if !noSkip {
		if h, err = fused.Add(x, h); err != nil {
			return nil, err
		}
	}
	if post {
		return ln.Forward(h)
	}
	return h, nil
}

// Parameters returns ln's, fc1's and fc2's.
func (f *FeedForward) Parameters() []*G.Node {
	if f == nil {
		return nil
	}
	return params(f.LN, f.MLP)
}

// Prefix returns Name, the prefix of the parameters' names.
func (f *FeedForward) Prefix() string {
	if f == nil {
		return ""
	}
	return f.Name
}

// Args returns dim, hidden, activation, post_ln, residual and eps.
func (f *FeedForward) Args() map[string]string {
	if f == nil {
		return nil
	}
	c := f.Config
	return map[string]string{"dim": itoa(c.Dim), "hidden": itoa(c.Hidden), "activation": orDefault(c.Activation).Name(),
		"post_ln": btoa(c.PostLN), "residual": btoa(!c.NoResidual), "eps": ftoa(orDefaultEps(c.Eps))}
}
