package main

// The model boundary: buildModel is the one function that knows the
// network; data, trainer, sampling and report see only its logits.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// mlpKind is a feed-forward variant: an activation, or a gate (Shazeer
// 2020: act(x·W1) ⊙ x·V, then W2) from nn.
type mlpKind struct {
	Act  activation.Activation // the ungated MLP's, or the gate's
	Gate nn.Gate               // zero: ungated
}

// Gated reports whether the MLP has a second input projection.
func (k mlpKind) Gated() bool { return !k.Gate.IsZero() }

var mlpKinds = map[string]mlpKind{
	"relu": {Act: activation.ReLU}, "gelu": {Act: activation.GELU}, "gelu_tanh": {Act: activation.GELUTanh}, "silu": {Act: activation.SiLU},
	"geglu": {activation.GELU, nn.GEGLU}, "swiglu": {activation.SiLU, nn.SwiGLU}, "reglu": {activation.ReLU, nn.ReGLU},
}

func mlpNames() string {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range mlpKinds {
			yield(k)
		}
	})
	return strings.Join(names, ", ")
}

// modelConfig fixes the parameter shapes.
type modelConfig struct {
	Vocab, T, DModel, Heads, Blocks, FF int
	MLP                                 string
}

// hidden is FF for an ungated MLP and nn.GatedHidden(FF), 2/3 of it, for a
// gated one, whose three matrices then hold as many weights as the
// ungated two (Shazeer 2020).
func (c modelConfig) hidden() int {
	if mlpKinds[c.MLP].Gated() {
		return nn.GatedHidden(c.FF)
	}
	return c.FF
}

// gpt is the nn.GPTConfig: nanoGPT's model (pre-LN causal blocks, learned
// positions, tied input and output embeddings, no dropout) with the MLP
// of c.MLP.
func (c modelConfig) gpt(recompute bool) (nn.GPTConfig, error) {
	kind, ok := mlpKinds[c.MLP]
	if !ok {
		return nn.GPTConfig{}, fmt.Errorf("-mlp %q: want one of %s", c.MLP, mlpNames())
	}
	cfg := nn.GPTConfig{BlockSize: c.T, VocabSize: c.Vocab, Layers: c.Blocks, Heads: c.Heads, Dim: c.DModel,
		Hidden: c.hidden(), Gate: kind.Gate, TieWeights: true, Recompute: recompute}
	if !kind.Gated() {
		cfg.Activation = kind.Act
	}
	return cfg, nil
}

// buildModel adds nn.GPT to g for x (rows × T character ids) and y (rows:
// the character after each window). It returns the GPT, the logits of the
// last position (rows × Vocab, what evaluation and the report score) and
// the training loss: nanoGPT's, the mean cross-entropy over all T
// positions, each predicting the next character (the targets are x
// shifted left by one with y appended), so one window trains T
// predictions. Parameters depend only on their names and g's seed.
// recompute trades memory for a second forward pass of each block.
func buildModel(g *graph.Graph, x, y *G.Node, c modelConfig, recompute bool) (m *nn.GPT, last, loss *G.Node, err error) {
	defer catch(&err)
	cfg := must(c.gpt(recompute))
	m = must(nn.NewGPT(g, cfg))
	rows := x.Shape()[0]
	// (rows × T+1): each window with its next character; columns 1…T are
	// the targets.
	full := must(G.Concat(1, x, must(fused.Reshape(y, rows, 1))))
	tidx := make([]int, 0, rows*c.T)
	for r := range rows {
		for t := 1; t <= c.T; t++ {
			tidx = append(tidx, r*(c.T+1)+t)
		}
	}
	targets := must(fused.Gather(full, tidx, rows, c.T))
	logits, l := must2(m.Loss(x, targets))
	loss = l
	idx := make([]int, 0, rows*c.Vocab)
	for r := range rows {
		for j := range c.Vocab {
			idx = append(idx, (r*c.T+c.T-1)*c.Vocab+j)
		}
	}
	last = must(fused.Gather(logits, idx, rows, c.Vocab))
	return m, last, loss, nil
}

// buildError carries an error from must to catch: graph building is a
// long chain of calls that can fail, and this keeps it readable.
type buildError struct{ err error }

func must[T any](v T, err error) T {
	if err != nil {
		panic(buildError{err})
	}
	return v
}

func must2[T, U any](a T, b U, err error) (T, U) {
	if err != nil {
		panic(buildError{err})
	}
	return a, b
}

// catch turns a must failure into *err; other panics go on.
func catch(err *error) {
	if r := recover(); r != nil {
		b, ok := r.(buildError)
		if !ok {
			panic(r)
		}
		*err = b.err
	}
}
