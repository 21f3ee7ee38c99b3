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
	Hidden int // inner width d_ff (usually 4·d: 3072)
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
// with parameters "<name>.ln.*", "<name>.fc1.*", "<name>.fc2.*".
type FeedForward struct {
	Config   FeedForwardConfig
	LN       *LayerNorm
	FC1, FC2 *Linear
	Drop     *Dropout
	// Hidden is the last Forward's pre-activation node FC1(...) (rows ×
	// Hidden), for probes such as dead-unit counts (see graph.Keep).
	Hidden *G.Node
}

// NewFeedForward adds the block's parameters to g under name.
func NewFeedForward(g *graph.Graph, name string, cfg FeedForwardConfig) (*FeedForward, error) {
	if cfg.Dim <= 0 || cfg.Hidden <= 0 {
		return nil, fmt.Errorf("nn.FeedForward %q: Dim = %d, Hidden = %d, want both > 0", name, cfg.Dim, cfg.Hidden)
	}
	cfg.Activation = orDefault(cfg.Activation)
	if err := cfg.Activation.Validate(); err != nil {
		return nil, fmt.Errorf("nn.FeedForward %q: %w", name, err)
	}
	cfg.Eps = orDefaultEps(cfg.Eps)
	f := &FeedForward{Config: cfg}
	var err error
	if f.LN, err = NewLayerNorm(g, join(name, "ln"), cfg.Dim, Eps(cfg.Eps)); err != nil {
		return nil, err
	}
	if f.FC1, err = NewLinear(g, join(name, "fc1"), cfg.Dim, cfg.Hidden); err != nil {
		return nil, err
	}
	if f.FC2, err = NewLinear(g, join(name, "fc2"), cfg.Hidden, cfg.Dim); err != nil {
		return nil, err
	}
	if f.Drop, err = NewDropout(g, join(name, "dropout"), cfg.Dropout); err != nil {
		return nil, err
	}
	return f, nil
}

// Forward applies the block to x (rows × Dim).
func (f *FeedForward) Forward(x *G.Node) (*G.Node, error) {
	h := x
	var err error
	if !f.Config.PostLN {
		if h, err = f.LN.Forward(h); err != nil {
			return nil, err
		}
	}
	if f.Hidden, err = f.FC1.Forward(h); err != nil {
		return nil, err
	}
	if h, err = f.Config.Activation.Apply(f.Hidden); err != nil {
		return nil, err
	}
	if h, err = f.FC2.Forward(h); err != nil {
		return nil, err
	}
	if h, err = f.Drop.Forward(h); err != nil {
		return nil, err
	}
	if !f.Config.NoResidual {
		if h, err = fused.Add(x, h); err != nil {
			return nil, err
		}
	}
	if f.Config.PostLN {
		return f.LN.Forward(h)
	}
	return h, nil
}
