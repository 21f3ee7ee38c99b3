package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// BlockConfig describes a Transformer block.
type BlockConfig struct {
	Dim    int  // model width d
	Heads  int  // attention heads; must divide Dim
	Causal bool // decoder (GPT) attention; false for encoders (BERT, ViT)
	// Hidden is the MLP's inner width; 0 means 4·Dim, or GatedHidden(4·Dim)
	// with a Gate (the same number of weights).
	Hidden int
	// Activation of the ungated MLP; the zero value is exact GELU.
	Activation activation.Activation
	// Gate makes the MLP gated (GLU, GEGLU, SwiGLU, ReGLU, GateOf(...));
	// the zero Gate keeps it ungated.
	Gate Gate
	// Dropout on attention probabilities and after both sublayers'
	// projections (nanoGPT's dropout); 0 disables it.
	Dropout float64
	// PostLN selects BERT's order x = LN(x + f(x)); the default is GPT-2's
	// pre-LN x = x + f(LN(x)).
	PostLN bool
	Eps    float64 // LayerNorm ε; 0 means PyTorch's 1e-5
	NoBias bool    // Linears without bias (nanoGPT's bias=False)
	// WeightInit and ProjInit replace PyTorch's default init of the
	// Linears' weights (c_attn, c_fc, c_up) and of the c_proj weights;
	// biases are then zero. nil keeps the default.
	WeightInit, ProjInit graph.Init
}

// Block is a Transformer block with nanoGPT's parameter names:
// "<name>.ln_1", "<name>.attn.c_attn", "<name>.attn.c_proj", "<name>.ln_2",
// "<name>.mlp.c_fc", ["<name>.mlp.c_up",] "<name>.mlp.c_proj".
//
//	pre-LN:  x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
//	post-LN: x = ln_1(x + attn(x));  x = ln_2(x + mlp(x))
type Block struct {
	Name     string
	Config   BlockConfig
	LN1, LN2 *LayerNorm
	Attn     *MultiHeadAttention
	MLP      *MLPBlock
}

// NewBlock adds the block's parameters to g under name.
func NewBlock(g *graph.Graph, name string, cfg BlockConfig) (*Block, error) {
	cfg.Eps = orDefaultEps(cfg.Eps)
	b := &Block{Name: name, Config: cfg}
	var err error
	if b.LN1, err = NewLayerNorm(g, join(name, "ln_1"), cfg.Dim, Eps(cfg.Eps)); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.Attn, err = NewMultiHeadAttention(g, join(name, "attn"), MultiHeadAttentionConfig{
		Dim: cfg.Dim, Heads: cfg.Heads, Causal: cfg.Causal, Dropout: cfg.Dropout, NoBias: cfg.NoBias,
		WeightInit: cfg.WeightInit, ProjInit: cfg.ProjInit,
	}); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.LN2, err = NewLayerNorm(g, join(name, "ln_2"), cfg.Dim, Eps(cfg.Eps)); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.MLP, err = NewMLPBlock(g, join(name, "mlp"), MLPBlockConfig{
		Dim: cfg.Dim, Hidden: cfg.Hidden, Activation: cfg.Activation, Gate: cfg.Gate, Dropout: cfg.Dropout,
		NoBias: cfg.NoBias, WeightInit: cfg.WeightInit, ProjInit: cfg.ProjInit,
	}); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	return b, nil
}

// Forward applies the block to x (batch·T × Dim); padMask, optional, is
// (batch × T) with 0 at padding keys.
func (b *Block) Forward(x *G.Node, batch int, padMask *G.Node) (*G.Node, error) {
	attn := func(h *G.Node) (*G.Node, error) { return b.Attn.Forward(h, batch, padMask) }
	var err error
	if x, err = b.sublayer(x, b.LN1, attn); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", b.Name, err)
	}
	if x, err = b.sublayer(x, b.LN2, b.MLP.Forward); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", b.Name, err)
	}
	return x, nil
}

// sublayer is x + f(ln(x)) (pre-LN) or ln(x + f(x)) (post-LN).
func (b *Block) sublayer(x *G.Node, ln *LayerNorm, f func(*G.Node) (*G.Node, error)) (*G.Node, error) {
	if b.Config.PostLN {
		h, err := f(x)
		if err != nil {
			return nil, err
		}
		if h, err = fused.Add(x, h); err != nil {
			return nil, err
		}
		return ln.Forward(h)
	}
	h, err := ln.Forward(x)
	if err != nil {
		return nil, err
	}
	if h, err = f(h); err != nil {
		return nil, err
	}
	return fused.Add(x, h)
}
