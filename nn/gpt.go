package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GPTConfig describes a GPT-2 style decoder, field for field nanoGPT's
// GPTConfig plus the choices this project studies.
type GPTConfig struct {
	// BlockSize is the longest sequence: the rows of the position table
	// transformer.wpe (GPT-2: 1024).
	BlockSize int
	// VocabSize is the number of token ids, the rows of transformer.wte
	// (GPT-2: 50257; nanoGPT pads it to 50304).
	VocabSize int
	Layers    int // n_layer: Transformer blocks (GPT-2 small: 12)
	Heads     int // n_head: attention heads per block; must divide Dim (12)
	Dim       int // n_embd: model width (768)
	// Dropout after the embeddings, on attention probabilities and after
	// every projection (nanoGPT's dropout; 0 for pretraining).
	Dropout float64
	// NoBias leaves the biases out of every Linear and LayerNorm (nanoGPT's
	// bias=False).
	NoBias bool
	// UntieWeights gives lm_head a weight of its own, lm_head.weight;
	// by default lm_head uses transformer.wte.weight, as nanoGPT and GPT-2
	// do.
	UntieWeights bool
	// Hidden is the MLP width; 0 means 4·Dim, or GatedHidden(4·Dim) with
	// a Gate.
	Hidden int
	// Activation of the MLP; the zero value is exact GELU (nanoGPT's
	// nn.GELU()); GPT-2's original code uses activation.GELUTanh.
	Activation activation.Activation
	// Gate selects a gated MLP (GLU, GEGLU, SwiGLU, ReGLU); zero = ungated.
	Gate Gate
	// PostLN uses post-LN blocks (not GPT-2; for comparisons).
	PostLN bool
	Eps    float64 // LayerNorm ε; 0 means 1e-5
	// Recompute keeps only each block's input during the forward pass and
	// runs the block again in the backward pass (activation recomputation,
	// nn.Stack): the same values and gradients, bit for bit, in much less
	// memory for one more forward pass per block. First derivatives only
	// (a machine from graph.Compile; no graph.CheckGradGrad).
	Recompute bool
	// PyTorchInit keeps PyTorch's per-layer default inits instead of
	// nanoGPT's (N(0, 0.02) for Linear and Embedding weights, zero
	// biases, N(0, 0.02/√(2·Layers)) for the c_proj weights).
	PyTorchInit bool
}

// GPT is nanoGPT's model with its state_dict names: transformer.wte,
// transformer.wpe, transformer.h.<i>.{ln_1, attn.c_attn, attn.c_proj,
// ln_2, mlp.c_fc, mlp.c_proj}, transformer.ln_f, lm_head, under the prefix
// Name ("" for nanoGPT's names at the root).
//
// Its state dict (StateDict, train.SaveWeights) is nanoGPT's: with a tied
// head it holds lm_head.weight, a copy of transformer.wte.weight, as
// PyTorch's state_dict() does; with the CausalMaskBuffers option also the
// transformer.h.<i>.attn.bias masks nanoGPT registers on torch < 2.
// Reading one (CheckStateDict, train.LoadWeights) accepts those two kinds
// of extra keys only when they hold what nanoGPT would: the copy equal to
// transformer.wte.weight, the masks ones on and below the diagonal.
type GPT struct {
	Name     string
	Config   GPTConfig
	WTE, WPE *G.Node // token (VocabSize × Dim) and position (BlockSize × Dim) tables
	Blocks   []*Block
	LNF      *LayerNorm
	// Head is lm_head.weight (VocabSize × Dim), the same node as WTE when
	// tied.
	Head *G.Node
	Drop *Dropout
	g    *graph.Graph

	blockCfg BlockConfig
}

func (m *GPT) blockName(i int) string { return join(m.Name, fmt.Sprintf("transformer.h.%d", i)) }

// NewGPT adds the model's parameters to g under name: "" gives nanoGPT's
// names ("transformer.wte.weight"), "teacher" gives
// "teacher.transformer.wte.weight", so any number of GPTs share a graph.
func NewGPT(g *graph.Graph, name string, cfg GPTConfig) (*GPT, error) {
	if cfg.BlockSize <= 0 || cfg.VocabSize <= 0 || cfg.Layers <= 0 || cfg.Dim <= 0 || cfg.Heads <= 0 {
		return nil, fmt.Errorf("nn.GPT %q: BlockSize = %d, VocabSize = %d, Layers = %d, Dim = %d, Heads = %d, want all > 0", name, cfg.BlockSize, cfg.VocabSize, cfg.Layers, cfg.Dim, cfg.Heads)
	}
	if cfg.Dim%cfg.Heads != 0 {
		return nil, fmt.Errorf("nn.GPT %q: %d heads do not divide Dim = %d", name, cfg.Heads, cfg.Dim)
	}
	m := &GPT{Name: name, Config: cfg, g: g}
	emb, weight, proj := graph.Normal(0, 1), graph.Init(nil), graph.Init(nil)
	if !cfg.PyTorchInit {
		emb, weight, proj = graph.Normal(0, 0.02), graph.Normal(0, 0.02), graph.Normal(0, 0.02/math.Sqrt(2*float64(cfg.Layers)))
	}
	var err error
	if m.WTE, err = g.Param(join(name, "transformer.wte.weight"), emb, cfg.VocabSize, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	if m.WPE, err = g.Param(join(name, "transformer.wpe.weight"), emb, cfg.BlockSize, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	if m.Drop, err = NewDropout(g, join(name, "transformer.drop"), cfg.Dropout); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	m.blockCfg = BlockConfig{
		Dim: cfg.Dim, Heads: cfg.Heads, Causal: true, Hidden: cfg.Hidden, Activation: cfg.Activation,
		Gate: cfg.Gate, Dropout: cfg.Dropout, PostLN: cfg.PostLN, Eps: cfg.Eps, NoBias: cfg.NoBias,
		WeightInit: weight, ProjInit: proj,
	}
	for i := 0; i < cfg.Layers; i++ {
		b, err := NewBlock(g, m.blockName(i), m.blockCfg)
		if err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
		m.Blocks = append(m.Blocks, b)
	}
	if m.LNF, err = NewLayerNorm(g, join(name, "transformer.ln_f"), cfg.Dim, lnOpts(orDefaultEps(cfg.Eps), cfg.NoBias)...); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	m.Head = m.WTE
	if cfg.UntieWeights {
		headInit := weight
		if headInit == nil {
			bound := 1 / math.Sqrt(float64(cfg.Dim))
			headInit = graph.Uniform(-bound, bound)
		}
		if m.Head, err = g.Param(join(name, "lm_head.weight"), headInit, cfg.VocabSize, cfg.Dim); err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
	}
	return m, nil
}

// Forward returns the logits (batch·T × VocabSize) for ids (batch × T):
// token ids stored as floats, T ≤ BlockSize. Row b·T + t holds the
// prediction for the token after ids[b, t]. An id outside [0, VocabSize)
// is an error when the graph runs.
func (m *GPT) Forward(ids *G.Node) (*G.Node, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	x, batch, err := m.Embed(ids)
	if err != nil {
		return nil, err
	}
	if m.Config.Recompute {
		names := make([]string, len(m.Blocks))
		for i := range names {
			names[i] = m.blockName(i)
		}
		x, err = Stack(m.g, x, names, true, func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
			b, err := NewBlock(g, name, m.blockCfg)
			if err != nil {
				return nil, err
			}
			return b.forward(x, batch, nil)
		})
		if err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
		return m.Logits(x)
	}
	for _, b := range m.Blocks {
		if x, err = b.forward(x, batch, nil); err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
	}
	return m.Logits(x)
}

// Embed returns the block input x = Drop(wte[ids] + wpe[t]) as a
// (batch·T × Dim) matrix, and batch.
func (m *GPT) Embed(ids *G.Node) (x *G.Node, batch int, err error) {
	if err := m.check(); err != nil {
		return nil, 0, err
	}
	if ids == nil || ids.Dims() != 2 {
		return nil, 0, fmt.Errorf("nn.GPT: ids have shape %v, want (batch, T)", shapeOf(ids))
	}
	batch, t := ids.Shape()[0], ids.Shape()[1]
	if t > m.Config.BlockSize {
		return nil, 0, fmt.Errorf("nn.GPT: sequence length %d is longer than the position table (BlockSize = %d)", t, m.Config.BlockSize)
	}
	flat, err := fused.Reshape(ids, batch*t, 1)
	if err != nil {
		return nil, 0, fmt.Errorf("nn.GPT: %w", err)
	}
	tok, err := fused.Embedding(flat, m.WTE)
	if err != nil {
		return nil, 0, fmt.Errorf("nn.GPT: token ids: %w", err)
	}
	pos, err := positionEmbedding(m.g, m.WPE, join(m.Name, "transformer.wpe.ids"), batch, t)
	if err != nil {
		return nil, 0, fmt.Errorf("nn.GPT: %w", err)
	}
	if x, err = fused.Add(tok, pos); err != nil {
		return nil, 0, fmt.Errorf("nn.GPT: %w", err)
	}
	if x, err = m.Drop.Forward(x); err != nil {
		return nil, 0, fmt.Errorf("nn.GPT: %w", err)
	}
	return x, batch, nil
}

// Logits applies ln_f and lm_head to the last block's output.
func (m *GPT) Logits(x *G.Node) (*G.Node, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	x, err := m.LNF.Forward(x)
	if err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	logits, err := fused.Linear(x, m.Head, nil)
	if err != nil {
		return nil, fmt.Errorf("nn.GPT: lm_head: %w", err)
	}
	return logits, nil
}

// Loss returns the logits and the mean cross-entropy against targets
// (batch × T, the next token of every position), as nanoGPT's
// forward(idx, targets): targets of −1 are ignored (ignore_index=−1).
func (m *GPT) Loss(ids, targets *G.Node) (logits, loss *G.Node, err error) {
	if ids == nil || targets == nil || ids.Dims() != 2 || !graph.SameShape(ids.Shape(), targets.Shape()) {
		return nil, nil, fmt.Errorf("nn.GPT: ids %v and targets %v, want both (batch, T)", shapeOf(ids), shapeOf(targets))
	}
	if logits, err = m.Forward(ids); err != nil {
		return nil, nil, err
	}
	labels, err := fused.Reshape(targets, targets.Shape().TotalSize())
	if err != nil {
		return nil, nil, fmt.Errorf("nn.GPT: %w", err)
	}
	if loss, err = fused.CrossEntropy(logits, labels, fused.IgnoreIndex(-1)); err != nil {
		return nil, nil, fmt.Errorf("nn.GPT: %w", err)
	}
	return logits, loss, nil
}

// positionEmbedding returns the rows 0 … t−1 of table, repeated for each of
// batch sequences: (batch·t × d), through an Embedding lookup of constant
// position ids so that table gets its gradient by scatter-add.
func positionEmbedding(g *graph.Graph, table *G.Node, name string, batch, t int) (*G.Node, error) {
	ids := tensor.New(tensor.Of(table.Dtype()), tensor.WithShape(batch*t, 1))
	for i := 0; i < batch*t; i++ {
		switch d := ids.Data().(type) {
		case []float32:
			d[i] = float32(i % t)
		case []float64:
			d[i] = float64(i % t)
		}
	}
	n, err := constant(g, fmt.Sprintf("%s(%d×%d)", name, batch, t), ids)
	if err != nil {
		return nil, err
	}
	return fused.Embedding(n, table)
}

// NextToken returns the model as a next-token function for Generate: for a
// context it returns the logits of the token after the last one, looking
// at the last BlockSize tokens (inference: no dropout). It runs on a
// KVCache: each call computes only the positions the previous call did not
// (one, while Generate extends the context), and the whole window again
// once the window slides. It reads m's parameter tensors, so it sees every
// optimizer step (see KVCache for how it notices changed weights).
// NextTokenUncached is the same function computed by the graph.
func (m *GPT) NextToken() (func(tokens []int) ([]float64, error), error) {
	c, err := m.NewKVCache()
	if err != nil {
		return nil, fmt.Errorf("nn.GPT.NextToken: %w", err)
	}
	return c.Next, nil
}

// NextTokenUncached returns what NextToken returns, computed without a
// cache: an inference copy of the model (one sequence of BlockSize tokens,
// no dropout) in a graph of its own that shares m's parameter tensors; each
// call runs the whole window through it. It is the reference the cache is
// tested against, and many times slower (BenchmarkGenerate).
func (m *GPT) NextTokenUncached() (func(tokens []int) ([]float64, error), error) {
	if m == nil || m.g == nil {
		return nil, fmt.Errorf("nn.GPT.NextTokenUncached: nil or unbuilt GPT, want one made by nn.NewGPT")
	}
	cfg := m.Config
	cfg.Recompute, cfg.Dropout = false, 0
	g, err := graph.New(m.g.Dtype(), m.g.Seed())
	if err != nil {
		return nil, err
	}
	inf, err := NewGPT(g, m.Name, cfg)
	if err != nil {
		return nil, err
	}
	for _, p := range g.Params() {
		src, ok := m.g.Lookup(p.Name())
		if !ok {
			return nil, fmt.Errorf("nn.GPT.NextTokenUncached: the model has no parameter %q", p.Name())
		}
		if err := G.Let(p, src.Value()); err != nil {
			return nil, fmt.Errorf("nn.GPT.NextTokenUncached: %q: %w", p.Name(), err)
		}
	}
	t := cfg.BlockSize
	ids, err := g.Input("ids", 1, t)
	if err != nil {
		return nil, err
	}
	logits, err := inf.Forward(ids)
	if err != nil {
		return nil, err
	}
	mc, err := g.Compile(nil, graph.Keep(logits))
	if err != nil {
		return nil, err
	}
	window := tensor.New(tensor.Of(g.Dtype()), tensor.WithShape(1, t))
	return func(tokens []int) ([]float64, error) {
		if len(tokens) == 0 {
			return nil, fmt.Errorf("nn.GPT.NextTokenUncached: empty context")
		}
		ctx := tokens[max(0, len(tokens)-t):]
		for i := 0; i < t; i++ {
			v := 0 // positions after the context: any id (causal attention ignores them)
			if i < len(ctx) {
				v = ctx[i]
			}
			if v < 0 || v >= cfg.VocabSize {
				return nil, fmt.Errorf("nn.GPT.NextTokenUncached: token %d is %d, want an id in [0, %d)", i, v, cfg.VocabSize)
			}
			if err := window.SetAt(castID(g.Dtype(), v), 0, i); err != nil {
				return nil, err
			}
		}
		if err := mc.Set(ids, window); err != nil {
			return nil, err
		}
		if err := mc.Run(); err != nil {
			return nil, err
		}
		v, err := mc.Value(logits)
		if err != nil {
			return nil, err
		}
		d, ok := v.(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("nn.GPT.NextTokenUncached: logits are a %T", v)
		}
		row := len(ctx) - 1
		out := make([]float64, cfg.VocabSize)
		for j := range out {
			x, err := d.At(row, j)
			if err != nil {
				return nil, err
			}
			switch x := x.(type) {
			case float32:
				out[j] = float64(x)
			case float64:
				out[j] = x
			}
		}
		return out, nil
	}, nil
}

// castID returns the token id as a value of the graph's dtype.
func castID(dt tensor.Dtype, v int) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return float64(v)
}

func (m *GPT) check() error {
	if m == nil || m.g == nil || m.WTE == nil || m.WPE == nil || m.LNF == nil || m.Head == nil || len(m.Blocks) != m.Config.Layers {
		return fmt.Errorf("nn.GPT: nil or unbuilt GPT, want one made by nn.NewGPT")
	}
	return nil
}

// Parameters returns the parameters in nanoGPT's order: wte, wpe, the
// blocks, ln_f and, when untied, lm_head.
func (m *GPT) Parameters() []*G.Node {
	if m == nil {
		return nil
	}
	parts := []any{m.WTE, m.WPE}
	for _, b := range m.Blocks {
		parts = append(parts, b)
	}
	return params(append(parts, m.LNF, m.Head)...)
}

// Prefix returns Name, the prefix of the parameters' names.
func (m *GPT) Prefix() string {
	if m == nil {
		return ""
	}
	return m.Name
}

// Args returns nanoGPT's model_args (block_size, vocab_size, n_layer,
// n_head, n_embd, bias) and the fields this project adds that change the
// function: hidden, the activation or gate, post_ln and eps. Dropout,
// Recompute and PyTorchInit change training, not the function, and are
// left out, as nanoGPT lets dropout differ on resume; whether the head is
// tied is told by the weights themselves.
func (m *GPT) Args() map[string]string {
	if m == nil {
		return nil
	}
	c := m.Config
	hidden := c.Hidden
	if len(m.Blocks) > 0 {
		hidden = m.Blocks[0].Config.Hidden
	}
	a := map[string]string{"block_size": itoa(c.BlockSize), "vocab_size": itoa(c.VocabSize), "n_layer": itoa(c.Layers),
		"n_head": itoa(c.Heads), "n_embd": itoa(c.Dim), "bias": btoa(!c.NoBias), "hidden": itoa(hidden),
		"post_ln": btoa(c.PostLN), "eps": ftoa(orDefaultEps(c.Eps))}
	addMLPKind(a, c.Activation, c.Gate)
	return a
}

// The names of the extra entries of nanoGPT's state dict.
const (
	wteName  = "transformer.wte.weight"
	headName = "lm_head.weight"
)

func maskName(i int) string { return fmt.Sprintf("transformer.h.%d.attn.bias", i) }

// stateDict returns nanoGPT's state dict from the parameters' entries:
// with the masks (if asked) before each block's attn.c_attn, as PyTorch
// orders a module's buffers before its children, and the tied
// lm_head.weight last.
func (m *GPT) stateDict(ps []graph.NamedTensor, c stateDictConfig) ([]graph.NamedTensor, error) {
	out := make([]graph.NamedTensor, 0, len(ps)+m.Config.Layers+1)
	var mask *tensor.Dense
	if c.masks {
		var err error
		if mask, err = causalMask(m.g.Dtype(), m.Config.BlockSize); err != nil {
			return nil, err
		}
	}
	for _, p := range ps {
		if mask != nil && strings.HasSuffix(p.Name, ".attn.c_attn.weight") {
			block := strings.TrimSuffix(p.Name, ".c_attn.weight")
			out = append(out, graph.NamedTensor{Name: block + ".bias", Value: mask})
		}
		out = append(out, p)
	}
	if !m.Config.UntieWeights {
		out = append(out, graph.NamedTensor{Name: headName, Value: m.WTE.Value().(*tensor.Dense)})
	}
	return out, nil
}

// acceptExtra accepts the tied head's copy, equal to sd's
// transformer.wte.weight, and nanoGPT's causal masks.
func (m *GPT) acceptExtra(name string, v *tensor.Dense, sd map[string]*tensor.Dense) error {
	if name == headName && !m.Config.UntieWeights {
		wte, ok := sd[wteName]
		if !ok {
			return fmt.Errorf("the tied copy of %s, which is missing", wteName)
		}
		if i, a, b, same := equalValues(v, wte); !same {
			return fmt.Errorf("differs from %s (element %d: %v, %v), so the head is untied; set GPTConfig.UntieWeights to load it", wteName, i, a, b)
		}
		return nil
	}
	for i := range m.Config.Layers {
		if name != maskName(i) {
			continue
		}
		bs := m.Config.BlockSize
		want, err := causalMask(tensor.Float64, bs)
		if err != nil {
			return err
		}
		if !graph.SameShape(v.Shape(), want.Shape()) {
			return fmt.Errorf("a causal mask of shape %v, want (1, 1, %d, %d) (BlockSize %d)", v.Shape(), bs, bs, bs)
		}
		if i, a, b, same := equalValues(v, want); !same {
			return fmt.Errorf("not the causal mask: element %d (row %d, column %d) is %v, want %v", i, i/bs, i%bs, a, b)
		}
		return nil
	}
	return fmt.Errorf("not in this GPT's state dict")
}

// causalMask is nanoGPT's attn.bias buffer: torch.tril(torch.ones(bs, bs))
// viewed as (1, 1, bs, bs).
func causalMask(dt tensor.Dtype, bs int) (*tensor.Dense, error) {
	v := make([]float64, bs*bs)
	for r := range bs {
		for c := 0; c <= r; c++ {
			v[r*bs+c] = 1
		}
	}
	return graph.FromFloat64s(dt, v, 1, 1, bs, bs)
}
