package nn

import (
	"fmt"
	"math"

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
	// NoBias leaves the biases out of Linears (nanoGPT's bias=False); the
	// LayerNorms keep theirs.
	NoBias bool
	// TieWeights makes lm_head use transformer.wte.weight (nanoGPT and
	// GPT-2 do); lm_head.weight is then not a separate parameter.
	TieWeights bool
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
	// memory for one more forward pass per block. Training with the tape
	// machine (graph.Compile) only; no second derivatives.
	Recompute bool
	// PyTorchInit keeps PyTorch's per-layer default inits instead of
	// nanoGPT's (N(0, 0.02) for Linear and Embedding weights, zero
	// biases, N(0, 0.02/√(2·Layers)) for the c_proj weights).
	PyTorchInit bool
}

// GPT is nanoGPT's model with its state_dict names: transformer.wte,
// transformer.wpe, transformer.h.<i>.{ln_1, attn.c_attn, attn.c_proj,
// ln_2, mlp.c_fc, mlp.c_proj}, transformer.ln_f, lm_head.
type GPT struct {
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

func (m *GPT) blockName(i int) string { return fmt.Sprintf("transformer.h.%d", i) }

// NewGPT adds the model's parameters to g (names as in nanoGPT, with no
// prefix).
func NewGPT(g *graph.Graph, cfg GPTConfig) (*GPT, error) {
	if cfg.BlockSize <= 0 || cfg.VocabSize <= 0 || cfg.Layers <= 0 || cfg.Dim <= 0 || cfg.Heads <= 0 {
		return nil, fmt.Errorf("nn.GPT: BlockSize = %d, VocabSize = %d, Layers = %d, Dim = %d, Heads = %d, want all > 0", cfg.BlockSize, cfg.VocabSize, cfg.Layers, cfg.Dim, cfg.Heads)
	}
	if cfg.Dim%cfg.Heads != 0 {
		return nil, fmt.Errorf("nn.GPT: %d heads do not divide Dim = %d", cfg.Heads, cfg.Dim)
	}
	m := &GPT{Config: cfg, g: g}
	emb, weight, proj := graph.Normal(0, 1), graph.Init(nil), graph.Init(nil)
	if !cfg.PyTorchInit {
		emb, weight, proj = graph.Normal(0, 0.02), graph.Normal(0, 0.02), graph.Normal(0, 0.02/math.Sqrt(2*float64(cfg.Layers)))
	}
	var err error
	if m.WTE, err = g.Param("transformer.wte.weight", emb, cfg.VocabSize, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	if m.WPE, err = g.Param("transformer.wpe.weight", emb, cfg.BlockSize, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	if m.Drop, err = NewDropout(g, "transformer.drop", cfg.Dropout); err != nil {
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
	if m.LNF, err = NewLayerNorm(g, "transformer.ln_f", cfg.Dim, Eps(orDefaultEps(cfg.Eps))); err != nil {
		return nil, fmt.Errorf("nn.GPT: %w", err)
	}
	m.Head = m.WTE
	if !cfg.TieWeights {
		headInit := weight
		if headInit == nil {
			bound := 1 / math.Sqrt(float64(cfg.Dim))
			headInit = graph.Uniform(-bound, bound)
		}
		if m.Head, err = g.Param("lm_head.weight", headInit, cfg.VocabSize, cfg.Dim); err != nil {
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
			return b.Forward(x, batch, nil)
		})
		if err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
		return m.Logits(x)
	}
	for _, b := range m.Blocks {
		if x, err = b.Forward(x, batch, nil); err != nil {
			return nil, fmt.Errorf("nn.GPT: %w", err)
		}
	}
	return m.Logits(x)
}

// Embed returns the block input x = Drop(wte[ids] + wpe[t]) as a
// (batch·T × Dim) matrix, and batch.
func (m *GPT) Embed(ids *G.Node) (x *G.Node, batch int, err error) {
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
	pos, err := positionEmbedding(m.g, m.WPE, "transformer.wpe.ids", batch, t)
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
	n := G.NewTensor(g.ExprGraph(), table.Dtype(), 2, G.WithShape(batch*t, 1), G.WithName(fmt.Sprintf("%s(%d×%d)", name, batch, t)), G.WithValue(ids))
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
	inf, err := NewGPT(g, cfg)
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
