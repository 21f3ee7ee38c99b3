package main

// The model of examples/transformer-ffn, next to GPTModel and ViTModel.

import (
	"errors"
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// CharFFN is the shape of a next-character model of Transformer
// feed-forward blocks without attention (examples/transformer-ffn): a
// window of Context characters, each embedded (Embed numbers), flattened and
// projected to width Dim, Layers pre-LN nn.FeedForward blocks of inner width
// Hidden, a final LayerNorm and a Linear to the Vocab characters. Parameter
// names are those of CharFFN in examples/transformer-ffn/torch_model.py.
type CharFFN struct {
	Vocab, Context, Embed, Dim, Hidden, Layers int
}

func (s CharFFN) String() string {
	return fmt.Sprintf("vocab %d, context %d, embed %d, dim %d, hidden %d, layers %d",
		s.Vocab, s.Context, s.Embed, s.Dim, s.Hidden, s.Layers)
}

// Params returns the number of trainable scalars, computed from the shapes
// (not read back from the graph, so a test can compare it with graph.Graph.NumParams).
func (s CharFFN) Params() int {
	block := 2*s.Dim + s.Dim*s.Hidden + s.Hidden + s.Hidden*s.Dim + s.Dim
	return s.Vocab*s.Embed + s.Context*s.Embed*s.Dim + s.Dim + s.Layers*block + 2*s.Dim + s.Dim*s.Vocab + s.Vocab
}

// CharFFNModel builds the network s with activation act on a new float32
// graph seeded by seed, for batches of rows windows; the loss is the
// cross-entropy of the next character. Parameter initial values depend on
// seed and their names only, so every activation starts from the same
// weights.
func CharFFNModel(s CharFFN, act activation.Activation, rows int, seed uint64) (train.Model, error) {
	if s.Vocab <= 0 || s.Context <= 0 || s.Embed <= 0 || s.Dim <= 0 || s.Hidden <= 0 || s.Layers < 0 || rows <= 0 {
		return train.Model{}, fmt.Errorf("model %v with %d rows: want every size > 0 (layers ≥ 0)", s, rows)
	}
	g, err := graph.New(tensor.Float32, seed)
	if err != nil {
		return train.Model{}, err
	}
	x, err1 := g.Input("x", rows, s.Context)
	y, err2 := g.Input("y", rows)
	emb, err3 := nn.NewEmbedding(g, "embed", s.Vocab, s.Embed)
	proj, err4 := nn.NewLinear(g, "proj", s.Context*s.Embed, s.Dim)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return train.Model{}, err
	}
	seq := nn.Sequential{emb, proj}
	for i := range s.Layers {
		b, err := nn.NewFeedForward(g, fmt.Sprintf("blocks.%d", i), nn.FeedForwardConfig{Dim: s.Dim, Hidden: s.Hidden, Activation: act})
		if err != nil {
			return train.Model{}, err
		}
		seq = append(seq, b)
	}
	lnf, err1 := nn.NewLayerNorm(g, "ln_f", s.Dim)
	head, err2 := nn.NewLinear(g, "head", s.Dim, s.Vocab)
	if err := errors.Join(err1, err2); err != nil {
		return train.Model{}, err
	}
	logits, err := append(seq, lnf, head).Forward(x)
	if err != nil {
		return train.Model{}, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification}, err
}
