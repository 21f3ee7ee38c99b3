package main

// The model: a window of K characters, embedded and flattened, projected to
// width d, L pre-LN FeedForward blocks, a final LayerNorm and a Linear to
// the vocabulary. Parameter names are those of CharFFN in torch_model.py.

import (
	"errors"
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// shape is everything that fixes the parameter shapes.
type shape struct {
	Vocab, Context, Embed, Dim, Hidden, Layers int
}

func (s shape) String() string {
	return fmt.Sprintf("vocab %d, context %d, embed %d, dim %d, hidden %d, layers %d",
		s.Vocab, s.Context, s.Embed, s.Dim, s.Hidden, s.Layers)
}

// params returns the number of trainable scalars, computed from the shapes
// (not read back from the graph, so the test can compare the two).
func (s shape) params() int {
	block := 2*s.Dim + s.Dim*s.Hidden + s.Hidden + s.Hidden*s.Dim + s.Dim
	return s.Vocab*s.Embed + s.Context*s.Embed*s.Dim + s.Dim + s.Layers*block + 2*s.Dim + s.Dim*s.Vocab + s.Vocab
}

// buildModel builds the network on a new float32 graph for batches of rows
// windows. Parameter initial values depend on seed and their names only, so
// every activation starts from the same weights.
func buildModel(s shape, act activation.Activation, rows int, seed uint64) (train.Model, error) {
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

// loadInit fills the model's parameters from a safetensors file, naming the
// model's shape when the file does not fit.
func loadInit(path string, m train.Model, s shape) error {
	if err := train.LoadWeights(path, m.Graph); err != nil {
		return fmt.Errorf("-init %s does not fit the model (%v; vocabulary from the text): %w", path, s, err)
	}
	return nil
}
