package nn

import (
	"fmt"
	"strconv"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
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
	// NoBias leaves the biases out of every Linear and LayerNorm
	// (nanoGPT's bias=False).
	NoBias bool
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
	Config   BlockConfig // Eps and the MLP's Hidden resolved
	LN1, LN2 *LayerNorm
	Attn     *MultiHeadAttention
	MLP      *MLPBlock
}

// NewBlock adds the block's parameters to g under name.
func NewBlock(g *graph.Graph, name string, cfg BlockConfig) (*Block, error) {
	cfg.Eps = orDefaultEps(cfg.Eps)
	b := &Block{Name: name, Config: cfg}
	var err error
	if b.LN1, err = NewLayerNorm(g, join(name, "ln_1"), cfg.Dim, lnOpts(cfg.Eps, cfg.NoBias)...); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.Attn, err = NewMultiHeadAttention(g, join(name, "attn"), MultiHeadAttentionConfig{
		Dim: cfg.Dim, Heads: cfg.Heads, Causal: cfg.Causal, Dropout: cfg.Dropout, NoBias: cfg.NoBias,
		WeightInit: cfg.WeightInit, ProjInit: cfg.ProjInit,
	}); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.LN2, err = NewLayerNorm(g, join(name, "ln_2"), cfg.Dim, lnOpts(cfg.Eps, cfg.NoBias)...); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	if b.MLP, err = NewMLPBlock(g, join(name, "mlp"), MLPBlockConfig{
		Dim: cfg.Dim, Hidden: cfg.Hidden, Activation: cfg.Activation, Gate: cfg.Gate, Dropout: cfg.Dropout,
		NoBias: cfg.NoBias, WeightInit: cfg.WeightInit, ProjInit: cfg.ProjInit,
	}); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", name, err)
	}
	b.Config.Hidden = b.MLP.Config.Hidden
	return b, nil
}

// lnOpts are the options of a block's LayerNorms.
func lnOpts(eps float64, noBias bool) []Option {
	if noBias {
		return []Option{Eps(eps), NoBias()}
	}
	return []Option{Eps(eps)}
}

// Forward applies the block to x, a batch of sequences (batch, T, Dim) as
// PyTorch's batch_first layout, and returns the same shape.
func (b *Block) Forward(x *G.Node) (*G.Node, error) { return b.ForwardPadded(x, nil) }

// ForwardPadded is Forward with a padding mask (batch, T): 1 for real
// tokens, 0 for padding keys; nil means none.
func (b *Block) ForwardPadded(x, padMask *G.Node) (*G.Node, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	return sequences("nn.Block "+strconv.Quote(b.Name), x, b.Config.Dim, func(x *G.Node, batch int) (*G.Node, error) {
		return b.forward(x, batch, padMask)
	})
}

func (b *Block) check() error {
	if b == nil || b.LN1 == nil || b.LN2 == nil || b.MLP == nil || b.Attn.check() != nil {
		return fmt.Errorf("nn.Block: not built, want one made by nn.NewBlock")
	}
	return nil
}

// forward applies the block to x (batch·T × Dim), sequence b in rows
// b·T … (b+1)·T − 1; padMask, optional, is (batch × T) with 0 at padding
// keys.
func (b *Block) forward(x *G.Node, batch int, padMask *G.Node) (*G.Node, error) {
	attn := func(h *G.Node) (*G.Node, error) { return b.Attn.forward(h, batch, padMask) }
	var err error
	if x, err = residual(x, b.LN1, attn, b.Config.PostLN, false); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", b.Name, err)
	}
	if x, err = residual(x, b.LN2, b.MLP.Forward, b.Config.PostLN, false); err != nil {
		return nil, fmt.Errorf("nn.Block %q: %w", b.Name, err)
	}
	return x, nil
}

// Parameters returns ln_1's, attn's, ln_2's and mlp's, in that order.
func (b *Block) Parameters() []*G.Node {
	if b == nil {
		return nil
	}
	return params(b.LN1, b.Attn, b.LN2, b.MLP)
}

// Prefix returns Name, the prefix of the parameters' names.
func (b *Block) Prefix() string {
	if b == nil {
		return ""
	}
	return b.Name
}

// Args returns every field that changes the block's function: dim, heads,
// causal, hidden, the activation or gate, post_ln, eps and bias.
func (b *Block) Args() map[string]string {
	if b == nil {
		return nil
	}
	c := b.Config
	a := map[string]string{"dim": itoa(c.Dim), "heads": itoa(c.Heads), "causal": btoa(c.Causal), "hidden": itoa(c.Hidden),
		"post_ln": btoa(c.PostLN), "eps": ftoa(orDefaultEps(c.Eps)), "bias": btoa(!c.NoBias)}
	addMLPKind(a, c.Activation, c.Gate)
	return a
}
