package main

// The model boundary. buildModel is the one function that knows the
// network; everything else (data, trainer, sampling, report) sees only the
// logits it returns.

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

// mlpKind is a feed-forward variant: an activation, and whether it gates a
// second linear projection (Shazeer 2020, "GLU Variants Improve
// Transformer": act(xW)⊙(xV), then W2).
type mlpKind struct {
	Act   activation.Activation
	Gated bool
}

// mlpKinds are the -mlp names, in the report's order.
var mlpKinds = map[string]mlpKind{
	"relu": {activation.ReLU, false}, "gelu": {activation.GELU, false}, "gelu_tanh": {activation.GELUTanh, false},
	"silu": {activation.SiLU, false}, "geglu": {activation.GELU, true}, "swiglu": {activation.SiLU, true}, "reglu": {activation.ReLU, true},
}

func mlpNames() string {
	var names []string
	for k := range mlpKinds {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// modelConfig fixes the parameter shapes. Heads is the intended GPT's; the
// stand-in has no attention and ignores it.
type modelConfig struct {
	Vocab, T, DModel, Heads, Blocks, Embed, FF int
	MLP                                        string
}

// hidden is the inner width of a block's feed-forward part: FF for an
// ungated MLP, 2/3 of it for a gated one, so both have about the same
// parameters (3·d·⅔·FF = 2·d·FF), as in Shazeer 2020.
func (c modelConfig) hidden() int {
	if mlpKinds[c.MLP].Gated {
		return 2 * c.FF / 3
	}
	return c.FF
}

// params counts the trainable scalars from the shapes (the test compares
// it with the graph's).
func (c modelConfig) params() int {
	d, h := c.DModel, c.hidden()
	block := 2*d + d*h + h + h*d + d // LN, fc1, fc2
	if mlpKinds[c.MLP].Gated {
		block += d*h + h // gate
	}
	return c.Vocab*c.Embed + c.T*c.Embed*d + d + c.Blocks*block + 2*d + d*c.Vocab + c.Vocab
}

// buildModel adds the network to g and returns the next-character logits
// (rows × Vocab) for x, rows windows of the previous T character ids.
// Parameters depend only on their names and g's seed, so every MLP kind
// sharing a name starts from the same values. recompute trades memory for
// a second forward pass of each block (nn.Stack).
//
// STAND-IN until nn.GPT / nn.ViT land: no attention. The T characters are
// embedded, flattened and projected to width DModel, then Blocks pre-LN
// feed-forward blocks, a final LayerNorm and a Linear to the vocabulary.
// nn.GPT will take the same x and return logits for every position; the
// last position's are the ones this program trains on and samples from.
func buildModel(g *graph.Graph, x *G.Node, c modelConfig, recompute bool) (*G.Node, error) {
	kind, ok := mlpKinds[c.MLP]
	if !ok {
		return nil, fmt.Errorf("-mlp %q: want one of %s", c.MLP, mlpNames())
	}
	emb, err := nn.NewEmbedding(g, "transformer.wte", c.Vocab, c.Embed)
	if err != nil {
		return nil, err
	}
	proj, err := nn.NewLinear(g, "transformer.proj", c.T*c.Embed, c.DModel)
	if err != nil {
		return nil, err
	}
	h, err := nn.Sequential{emb, proj}.Forward(x)
	if err != nil {
		return nil, err
	}
	names := make([]string, c.Blocks)
	for i := range names {
		names[i] = fmt.Sprintf("transformer.h.%d.mlp", i)
	}
	if c.Blocks > 0 {
		if h, err = nn.Stack(g, h, names, recompute, mlpBlock(c.DModel, c.hidden(), kind)); err != nil {
			return nil, err
		}
	}
	lnf, err := nn.NewLayerNorm(g, "transformer.ln_f", c.DModel)
	if err != nil {
		return nil, err
	}
	head, err := nn.NewLinear(g, "lm_head", c.DModel, c.Vocab)
	if err != nil {
		return nil, err
	}
	return nn.Sequential{lnf, head}.Forward(h)
}

// mlpBlock builds x + fc2(act(fc1(LN x))), or for a gated kind
// x + fc2(act(fc1(LN x)) ⊙ gate(LN x)). The gated form belongs in nn
// (nn.FeedForward with a gate); it is here until then.
func mlpBlock(d, hidden int, kind mlpKind) nn.BlockFunc {
	return func(g *graph.Graph, name string, x *G.Node) (*G.Node, error) {
		if !kind.Gated {
			b, err := nn.NewFeedForward(g, name, nn.FeedForwardConfig{Dim: d, Hidden: hidden, Activation: kind.Act})
			if err != nil {
				return nil, err
			}
			return b.Forward(x)
		}
		ln, err := nn.NewLayerNorm(g, name+".ln", d)
		if err != nil {
			return nil, err
		}
		fc1, err := nn.NewLinear(g, name+".fc1", d, hidden)
		if err != nil {
			return nil, err
		}
		gate, err := nn.NewLinear(g, name+".gate", d, hidden)
		if err != nil {
			return nil, err
		}
		fc2, err := nn.NewLinear(g, name+".fc2", hidden, d)
		if err != nil {
			return nil, err
		}
		n, err := ln.Forward(x)
		if err != nil {
			return nil, err
		}
		a, err := nn.Sequential{fc1, nn.Act(kind.Act)}.Forward(n)
		if err != nil {
			return nil, err
		}
		v, err := gate.Forward(n)
		if err != nil {
			return nil, err
		}
		if a, err = G.HadamardProd(a, v); err != nil {
			return nil, err
		}
		if a, err = fc2.Forward(a); err != nil {
			return nil, err
		}
		return fused.Add(x, a)
	}
}
