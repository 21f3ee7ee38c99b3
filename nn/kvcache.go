package nn

// Generation with a key-value cache. A GPT's keys and values at a position
// depend only on the tokens up to it (causal attention, learned absolute
// positions), so while the context grows, each new token needs only its own
// row through the model: embedding, the blocks (attention of one query over
// the cached keys and values), ln_f and lm_head. This is plain Go over the
// model's parameter tensors, no graph: the matrix products go through
// gemm.Gemm, the activations through activation.Forward, and LayerNorm,
// softmax, sigmoid, sums and products are the fused ops' own arithmetic.
//
// Once the context is longer than BlockSize the window slides: every token
// moves to another position, so every cached key and value is stale, and
// the whole window is run again (as one batch of rows; in the last block
// only the last row goes past the key-value projection).

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/gemm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// KVCache computes a GPT's next-token logits for a growing context, one
// new position per call, keeping every block's keys and values. It reads
// the model's parameter tensors at every call (it copies no weights), and
// it starts again from the whole window when the context is not the
// previous one extended, when the window slides (the context is longer
// than BlockSize), or when graph.ParamsVersion has changed since the
// cached rows were computed: optimizer steps, train.LoadWeights and
// graph.SetFloat64s mark parameters changed. After writing into a
// parameter tensor by hand, or binding another tensor to a parameter
// node, call graph.MarkParamsChanged (or Reset).
// A KVCache is for one goroutine at a time.
type KVCache struct {
	m      *GPT
	ids    []int     // the tokens at positions 0, 1, … of the cached window
	logits []float64 // the next-token logits after ids
	// version is graph.ParamsVersion when the cached rows were computed.
	version uint64
	s32     *kvState[float32]
	s64     *kvState[float64]
}

// NewKVCache returns an empty cache for m (inference: no dropout).
func (m *GPT) NewKVCache() (*KVCache, error) {
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("nn.KVCache: %w", err)
	}
	cfg := m.Config
	hidden := m.Blocks[0].MLP.Config.Hidden
	c := &KVCache{m: m}
	switch m.g.Dtype() {
	case tensor.Float32:
		c.s32 = newKVState[float32](cfg, hidden)
	case tensor.Float64:
		c.s64 = newKVState[float64](cfg, hidden)
	default:
		return nil, fmt.Errorf("nn.KVCache: the model is %v, want float32 or float64", m.g.Dtype())
	}
	return c, nil
}

// Len is the number of positions whose keys and values are cached.
func (c *KVCache) Len() int { return len(c.ids) }

// Reset empties the cache; the next call runs its whole window.
func (c *KVCache) Reset() { c.ids = c.ids[:0] }

// Next returns the logits of the token after tokens, looking at the last
// BlockSize of them, as the function NextToken returns; it computes only
// the positions that are not cached.
func (c *KVCache) Next(tokens []int) ([]float64, error) {
	if c == nil || c.m == nil {
		return nil, fmt.Errorf("nn.KVCache: nil cache, want one from GPT.NewKVCache")
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("nn.KVCache: empty context, want at least one token")
	}
	cfg := c.m.Config
	start := max(0, len(tokens)-cfg.BlockSize)
	ctx := tokens[start:]
	for i, v := range ctx {
		if v < 0 || v >= cfg.VocabSize {
			return nil, fmt.Errorf("nn.KVCache: token %d is %d, want an id in [0, %d)", start+i, v, cfg.VocabSize)
		}
	}
	var err error
	if c.s32 != nil {
		err = c.s32.next(c, ctx)
	} else {
		err = c.s64.next(c, ctx)
	}
	if err != nil {
		c.Reset()
		return nil, err
	}
	return slices.Clone(c.logits), nil
}

// kvState is the cache and the scratch space of one dtype.
type kvState[T graph.Float] struct {
	cfg                            GPTConfig
	hidden                         int
	keys, values                   [][]T // per block: BlockSize × Dim, row p is position p
	x, h, qkv, att, tmp, ff, up, s []T   // scratch for up to BlockSize rows
	logits                         []T
	w                              gptWeights[T]
	zeros                          []T // β of a LayerNorm without bias, as the graph's constant
}

func newKVState[T graph.Float](cfg GPTConfig, hidden int) *kvState[T] {
	t, d := cfg.BlockSize, cfg.Dim
	s := &kvState[T]{cfg: cfg, hidden: hidden,
		x: make([]T, t*d), h: make([]T, t*d), qkv: make([]T, t*3*d), att: make([]T, t*d), tmp: make([]T, t*d),
		ff: make([]T, t*hidden), s: make([]T, t*t), logits: make([]T, cfg.VocabSize), zeros: make([]T, d)}
	if !cfg.Gate.IsZero() {
		s.up = make([]T, t*hidden)
	}
	for range cfg.Layers {
		s.keys, s.values = append(s.keys, make([]T, t*d)), append(s.values, make([]T, t*d))
	}
	return s
}

// gptWeights are the model's parameter tensors as slices, read afresh at
// every call (a parameter's value may have been replaced).
type gptWeights[T graph.Float] struct {
	wte, wpe, head, lnfW, lnfB []T
	blocks                     []blockWeights[T]
}

type blockWeights[T graph.Float] struct {
	ln1W, ln1B, attnW, attnB, projW, projB, ln2W, ln2B []T
	mlp                                                mlpWeights[T]
}

// readWeights sets w to m's parameters, checking every shape; a
// LayerNorm without bias gets zeros for β, as in the graph.
func readWeights[T graph.Float](w *gptWeights[T], m *GPT, hidden int, zeros []T) (err error) {
	cfg := m.Config
	d, v := cfg.Dim, cfg.VocabSize
	get := func(n *G.Node, optional bool, shape ...int) []T {
		if err != nil {
			return nil
		}
		var x []T
		x, err = paramData[T](n, optional, shape...)
		return x
	}
	w.wte, w.wpe, w.head = get(m.WTE, false, v, d), get(m.WPE, false, cfg.BlockSize, d), get(m.Head, false, v, d)
	if m.LNF == nil || len(m.Blocks) != cfg.Layers {
		return fmt.Errorf("nn.KVCache: the GPT has %d blocks and ln_f %v, want %d blocks and ln_f", len(m.Blocks), m.LNF != nil, cfg.Layers)
	}
	lnBias := func(ln *LayerNorm) []T {
		if ln.Bias == nil && ln.Weight != nil {
			return zeros
		}
		return get(ln.Bias, true, d)
	}
	w.lnfW, w.lnfB = get(m.LNF.Weight, true, d), lnBias(m.LNF)
	w.blocks = w.blocks[:0]
	for _, b := range m.Blocks {
		var bw blockWeights[T]
		bw.ln1W, bw.ln1B = get(b.LN1.Weight, true, d), lnBias(b.LN1)
		bw.ln2W, bw.ln2B = get(b.LN2.Weight, true, d), lnBias(b.LN2)
		bw.attnW, bw.attnB = get(b.Attn.CAttn.Weight, false, 3*d, d), get(b.Attn.CAttn.Bias, true, 3*d)
		bw.projW, bw.projB = get(b.Attn.CProj.Weight, false, d, d), get(b.Attn.CProj.Bias, true, d)
		mw := &bw.mlp
		mw.fcW, mw.fcB = get(b.MLP.CFC.Weight, false, hidden, d), get(b.MLP.CFC.Bias, true, hidden)
		if b.MLP.CUp != nil {
			mw.upW, mw.upB = get(b.MLP.CUp.Weight, false, hidden, d), get(b.MLP.CUp.Bias, true, hidden)
		}
		mw.outW, mw.outB = get(b.MLP.CProj.Weight, false, d, hidden), get(b.MLP.CProj.Bias, true, d)
		w.blocks = append(w.blocks, bw)
	}
	return err
}

// paramData returns n's values, or nil for an absent optional parameter.
func paramData[T graph.Float](n *G.Node, optional bool, shape ...int) ([]T, error) {
	if n == nil {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("nn.KVCache: a parameter of shape %v is missing", shape)
	}
	d, ok := n.Value().(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("nn.KVCache: parameter %q holds a %T, want a *tensor.Dense", n.Name(), n.Value())
	}
	x, ok := d.Data().([]T)
	if !ok || !d.Shape().Eq(tensor.Shape(shape)) || len(x) != d.Shape().TotalSize() {
		return nil, fmt.Errorf("nn.KVCache: parameter %q is %v %v, want %v %T", n.Name(), d.Dtype(), d.Shape(), tensor.Shape(shape), x)
	}
	return x, nil
}

// next brings the cache to ctx (at most BlockSize valid ids) and sets
// c.ids and c.logits.
func (s *kvState[T]) next(c *KVCache, ctx []int) error {
	if err := readWeights(&s.w, c.m, s.hidden, s.zeros); err != nil {
		return err
	}
	version := graph.ParamsVersion()
	fresh := version == c.version
	c.version = version
	p0 := len(c.ids)
	if !fresh || p0 > len(ctx) || !slices.Equal(c.ids, ctx[:p0]) {
		p0 = 0
	}
	if p0 == len(ctx) && p0 > 0 {
		return nil // the same context again: c.logits holds its answer
	}
	c.ids = append(c.ids[:p0], ctx[p0:]...)
	if err := s.forward(&s.w, c.m.Blocks, ctx[p0:], p0); err != nil {
		return err
	}
	if cap(c.logits) < len(s.logits) {
		c.logits = make([]float64, len(s.logits))
	}
	c.logits = c.logits[:len(s.logits)]
	for j, v := range s.logits {
		c.logits[j] = float64(v)
	}
	return nil
}

// forward runs the new tokens at positions p0, p0+1, … through the model,
// appending their keys and values, and leaves the last one's logits in
// s.logits.
func (s *kvState[T]) forward(w *gptWeights[T], blocks []*Block, ids []int, p0 int) (err error) {
	d, k := s.cfg.Dim, len(ids)
	x := s.x[:k*d]
	for r, id := range ids {
		tok, pos, row := w.wte[id*d:(id+1)*d], w.wpe[(p0+r)*d:(p0+r+1)*d], x[r*d:(r+1)*d]
		for j := range row {
			row[j] = tok[j] + pos[j]
		}
	}
	for i := range w.blocks {
		// In the last block only the last row matters after its keys and
		// values are cached.
		last := i == len(w.blocks)-1
		if x, err = s.block(&w.blocks[i], blocks[i].MLP, s.keys[i], s.values[i], x, p0, k, last); err != nil {
			return err
		}
		if last {
			p0, k = p0+k-1, 1
		}
	}
	h := s.h[:d]
	layerNorm(h, x[(k-1)*d:k*d], w.lnfW, w.lnfB, d, s.eps())
	if err := linear(s.logits, h, w.head, nil, 1, s.cfg.VocabSize, d); err != nil {
		return fmt.Errorf("nn.KVCache: lm_head: %w", err)
	}
	return nil
}

func (s *kvState[T]) eps() float64 {
	if s.cfg.Eps == 0 {
		return 1e-5
	}
	return s.cfg.Eps
}

// block applies one Transformer block to the k rows x (positions p0 …
// p0+k−1) and returns its output rows: all k, or with onlyLast the last
// one (the keys and values of all k are cached either way).
func (s *kvState[T]) block(b *blockWeights[T], mlp *MLPBlock, keys, values, x []T, p0, k int, onlyLast bool) ([]T, error) {
	d, eps := s.cfg.Dim, s.eps()
	post := s.cfg.PostLN
	h := x
	if !post {
		h = s.h[:k*d]
		layerNorm(h, x, b.ln1W, b.ln1B, d, eps)
	}
	qkv := s.qkv[:k*3*d]
	if err := linear(qkv, h, b.attnW, b.attnB, k, 3*d, d); err != nil {
		return nil, fmt.Errorf("nn.KVCache: c_attn: %w", err)
	}
	for r := range k {
		copy(keys[(p0+r)*d:(p0+r+1)*d], qkv[r*3*d+d:r*3*d+2*d])
		copy(values[(p0+r)*d:(p0+r+1)*d], qkv[r*3*d+2*d:(r+1)*3*d])
	}
	if onlyLast {
		x, qkv = x[(k-1)*d:k*d], qkv[(k-1)*3*d:]
		p0, k = p0+k-1, 1
	}
	att := s.att[:k*d]
	if err := s.attend(att, qkv, keys, values, p0, k); err != nil {
		return nil, fmt.Errorf("nn.KVCache: attention: %w", err)
	}
	out := s.tmp[:k*d]
	if err := linear(out, att, b.projW, b.projB, k, d, d); err != nil {
		return nil, fmt.Errorf("nn.KVCache: c_proj: %w", err)
	}
	x = s.residual(x, out, b.ln1W, b.ln1B, k)

	h = x
	if !post {
		h = s.h[:k*d]
		layerNorm(h, x, b.ln2W, b.ln2B, d, eps)
	}
	var up []T
	if s.up != nil {
		up = s.up[:k*s.hidden]
	}
	if err := mlpRows(mlp, &b.mlp, out, h, s.ff[:k*s.hidden], up, k); err != nil {
		return nil, fmt.Errorf("nn.KVCache: %w", err)
	}
	return s.residual(x, out, b.ln2W, b.ln2B, k), nil
}

// residual returns x + f (pre-LN) or LN(x + f) (post-LN), in x's rows.
func (s *kvState[T]) residual(x, f, lnW, lnB []T, k int) []T {
	for j := range x {
		x[j] += f[j]
	}
	if s.cfg.PostLN {
		layerNorm(x, x, lnW, lnB, s.cfg.Dim, s.eps())
	}
	return x
}

// attend writes the merged heads of causal attention for the k query rows
// of qkv (positions p0 …) over the cached keys and values of positions
// 0 … p0+k−1, as fused.ScaledDotProductAttention computes them.
func (s *kvState[T]) attend(out, qkv, keys, values []T, p0, k int) error {
	d, heads := s.cfg.Dim, s.cfg.Heads
	dh := d / heads
	n := p0 + k
	scale := 1 / math.Sqrt(float64(dh))
	sc := s.s[:k*n]
	for hd := range heads {
		if err := gemm.Gemm(false, true, k, n, dh, T(scale), qkv[hd*dh:], 3*d, keys[hd*dh:], d, 0, sc, n); err != nil {
			return err
		}
		for r := range k {
			row := sc[r*n : (r+1)*n]
			clear(row[p0+r+1:])
			fused.SoftmaxRow(row[:p0+r+1], row[:p0+r+1])
		}
		if err := gemm.Gemm(false, false, k, dh, n, 1, sc, n, values[hd*dh:], d, 0, out[hd*dh:], d); err != nil {
			return err
		}
	}
	return nil
}

// linear sets y (rows × out) = x (rows × in) · wᵀ + bias, as fused.Linear:
// the bias is copied into y and kept by GEMM with β = 1.
func linear[T graph.Float](y, x, w, bias []T, rows, out, in int) error {
	var beta T
	if bias != nil {
		for r := range rows {
			copy(y[r*out:(r+1)*out], bias)
		}
		beta = 1
	}
	return gemm.Gemm(false, true, rows, out, in, 1, x, in, w, in, beta, y, out)
}

// layerNorm normalizes each row of x (d wide) into y (which may be x), as
// fused.LayerNorm does.
func layerNorm[T graph.Float](y, x, gamma, beta []T, d int, eps float64) {
	for r := 0; r < len(x)/d; r++ {
		fused.LayerNormRow(y[r*d:(r+1)*d], x[r*d:(r+1)*d], gamma, beta, eps)
	}
}

// sigmoid replaces x by σ(x), as fused.Sigmoid.
func sigmoid[T graph.Float](x []T) {
	for i, t := range x {
		x[i] = T(fused.SigmoidOf(float64(t)))
	}
}
