package nn

import (
	"fmt"
	"strconv"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// MultiHeadAttentionConfig describes a self-attention layer.
type MultiHeadAttentionConfig struct {
	Dim    int  // model width d (nanoGPT's n_embd)
	Heads  int  // heads (n_head); must divide Dim
	Causal bool // each token sees only itself and earlier tokens (GPT)
	// Dropout on the attention probabilities and after c_proj, as
	// nanoGPT's attn_dropout and resid_dropout; 0 disables both.
	Dropout float64
	NoBias  bool // Linears without bias (nanoGPT's bias=False)
	// WeightInit and ProjInit replace PyTorch's default init of c_attn's
	// and c_proj's weights (biases are then zero); nil keeps the default.
	WeightInit, ProjInit graph.Init
}

// MultiHeadAttention is nanoGPT's CausalSelfAttention (or the non-causal
// encoder form): one Linear c_attn (d → 3d, q‖k‖v), fused scaled
// dot-product attention over the heads, and c_proj (d → d). Parameters
// "<name>.c_attn.*", "<name>.c_proj.*".
type MultiHeadAttention struct {
	Name         string
	Config       MultiHeadAttentionConfig
	CAttn, CProj *Linear
	Resid        *Dropout
	g            *graph.Graph
}

// NewMultiHeadAttention adds the layer's parameters to g under name.
func NewMultiHeadAttention(g *graph.Graph, name string, cfg MultiHeadAttentionConfig) (*MultiHeadAttention, error) {
	if cfg.Dim <= 0 || cfg.Heads <= 0 || cfg.Dim%cfg.Heads != 0 {
		return nil, fmt.Errorf("nn.MultiHeadAttention %q: Dim = %d, Heads = %d, want Heads > 0 dividing Dim > 0", name, cfg.Dim, cfg.Heads)
	}
	a := &MultiHeadAttention{Name: name, Config: cfg, g: g}
	var err error
	if a.CAttn, err = NewLinear(g, join(name, "c_attn"), cfg.Dim, 3*cfg.Dim, linearOpts(cfg.NoBias, cfg.WeightInit)...); err != nil {
		return nil, err
	}
	if a.CProj, err = NewLinear(g, join(name, "c_proj"), cfg.Dim, cfg.Dim, linearOpts(cfg.NoBias, cfg.ProjInit)...); err != nil {
		return nil, err
	}
	if a.Resid, err = NewDropout(g, join(name, "resid_dropout"), cfg.Dropout); err != nil {
		return nil, err
	}
	return a, nil
}

// Forward attends within each sequence of x, a batch of sequences
// (batch, T, Dim) as PyTorch's batch_first layout, and returns the same
// shape.
func (a *MultiHeadAttention) Forward(x *G.Node) (*G.Node, error) { return a.ForwardPadded(x, nil) }

// ForwardPadded is Forward with a padding mask (batch, T): 1 for real
// tokens, 0 for padding keys (PyTorch's key_padding_mask with the opposite
// sign convention); nil means none.
func (a *MultiHeadAttention) ForwardPadded(x, padMask *G.Node) (*G.Node, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return sequences("nn.MultiHeadAttention "+strconv.Quote(a.Name), x, a.Config.Dim, func(x *G.Node, batch int) (*G.Node, error) {
		return a.forward(x, batch, padMask)
	})
}

func (a *MultiHeadAttention) check() error {
	if a == nil || a.CAttn == nil || a.CProj == nil || a.g == nil {
		return fmt.Errorf("nn.MultiHeadAttention: not built, want one made by nn.NewMultiHeadAttention")
	}
	return nil
}

// sequences applies f to x (batch, T, d) as the (batch·T, d) matrix the
// fused ops take, sequence b in rows b·T … (b+1)·T − 1, and returns f's
// result as (batch, T, d) again.
// what names the layer in errors.
func sequences(what string, x *G.Node, d int, f func(x *G.Node, batch int) (*G.Node, error)) (*G.Node, error) {
	if x == nil || x.Dims() != 3 || x.Shape()[2] != d {
		return nil, fmt.Errorf("%s: input has shape %v, want (batch, T, %d); one sequence is (1, T, %d)", what, shapeOf(x), d, d)
	}
	batch, t := x.Shape()[0], x.Shape()[1]
	rows, err := fused.Reshape(x, batch*t, d)
	if err != nil {
		return nil, err
	}
	if rows, err = f(rows, batch); err != nil {
		return nil, err
	}
	return fused.Reshape(rows, batch, t, d)
}

// forward attends within each of batch sequences: x is (batch·T × Dim),
// sequence b in rows b·T … (b+1)·T − 1; padMask, optional, is (batch × T).
func (a *MultiHeadAttention) forward(x *G.Node, batch int, padMask *G.Node) (*G.Node, error) {
	if x == nil || x.Dims() != 2 || x.Shape()[1] != a.Config.Dim || batch <= 0 || x.Shape()[0]%batch != 0 {
		return nil, fmt.Errorf("nn.MultiHeadAttention %q: input has shape %v with batch = %d, want (batch·T, %d)", a.Name, shapeOf(x), batch, a.Config.Dim)
	}
	qkv, err := a.CAttn.Forward(x)
	if err != nil {
		return nil, err
	}
	h, err := fused.ScaledDotProductAttention(qkv, padMask, fused.AttentionConfig{
		Batch: batch, Heads: a.Config.Heads, Causal: a.Config.Causal,
		Dropout: a.Config.Dropout, Seed: a.g.Seed(), Name: join(a.Name, "attn_dropout"), Mode: a.g,
	})
	if err != nil {
		return nil, fmt.Errorf("nn.MultiHeadAttention %q: %w", a.Name, err)
	}
	if h, err = a.CProj.Forward(h); err != nil {
		return nil, err
	}
	return a.Resid.Forward(h)
}

// Parameters returns c_attn's and c_proj's.
func (a *MultiHeadAttention) Parameters() []*G.Node {
	if a == nil {
		return nil
	}
	return params(a.CAttn, a.CProj)
}

// Prefix returns Name, the prefix of the parameters' names.
func (a *MultiHeadAttention) Prefix() string {
	if a == nil {
		return ""
	}
	return a.Name
}

// Args returns dim, heads, causal and bias.
func (a *MultiHeadAttention) Args() map[string]string {
	if a == nil {
		return nil
	}
	c := a.Config
	return map[string]string{"dim": itoa(c.Dim), "heads": itoa(c.Heads), "causal": btoa(c.Causal), "bias": btoa(!c.NoBias)}
}
