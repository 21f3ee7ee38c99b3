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

// mlpKind is a feed-forward variant: an activation, and whether it gates a
// second projection (Shazeer 2020: act(x·W1) ⊙ x·V, then W2).
type mlpKind struct {
	Act   activation.Activation
	Gated bool
}

var mlpKinds = map[string]mlpKind{
	"relu": {activation.ReLU, false}, "gelu": {activation.GELU, false}, "gelu_tanh": {activation.GELUTanh, false},
	"silu": {activation.SiLU, false}, "geglu": {activation.GELU, true}, "swiglu": {activation.SiLU, true}, "reglu": {activation.ReLU, true},
}

func mlpNames() string {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range mlpKinds {
			yield(k)
		}
	})
	return strings.Join(names, ", ")
}

// modelConfig fixes the parameter shapes. Heads is the GPT's; the stand-in
// has no attention and ignores it.
type modelConfig struct {
	Vocab, T, DModel, Heads, Blocks, Embed, FF int
	MLP                                        string
}

// hidden is FF for an ungated MLP and 2/3 of it for a gated one, whose
// three matrices then hold as many weights as the ungated two (Shazeer 2020).
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
// (rows × Vocab) for x, rows windows of T character ids. Parameters depend
// only on their names and g's seed. recompute trades memory for a second
// forward pass of each block (nn.Stack).
//
// STAND-IN until nn.GPT / nn.ViT land: no attention. The T characters are
// embedded, flattened and projected to width DModel, then Blocks pre-LN
// MLP blocks, a final LayerNorm and a Linear to the vocabulary. nn.GPT
// will take the same x and give logits for every position; this program
// trains on and samples from the last position's.
func buildModel(g *graph.Graph, x *G.Node, c modelConfig, recompute bool) (logits *G.Node, err error) {
	kind, ok := mlpKinds[c.MLP]
	if !ok {
		return nil, fmt.Errorf("-mlp %q: want one of %s", c.MLP, mlpNames())
	}
	defer catch(&err)
	h := must(nn.Sequential{must(nn.NewEmbedding(g, "transformer.wte", c.Vocab, c.Embed)),
		must(nn.NewLinear(g, "transformer.proj", c.T*c.Embed, c.DModel))}.Forward(x))
	names := make([]string, c.Blocks)
	for i := range names {
		names[i] = fmt.Sprintf("transformer.h.%d.mlp", i)
	}
	if c.Blocks > 0 {
		h = must(nn.Stack(g, h, names, recompute, mlpBlock(c.DModel, c.hidden(), kind)))
	}
	return nn.Sequential{must(nn.NewLayerNorm(g, "transformer.ln_f", c.DModel)), must(nn.NewLinear(g, "lm_head", c.DModel, c.Vocab))}.Forward(h)
}

// mlpBlock builds x + fc2(act(fc1(LN x))), or for a gated kind
// x + fc2(act(fc1(LN x)) ⊙ gate(LN x)). The gated form belongs in nn; it
// is here until nn's gated FFN lands.
func mlpBlock(d, hidden int, kind mlpKind) nn.BlockFunc {
	return func(g *graph.Graph, name string, x *G.Node) (y *G.Node, err error) {
		if !kind.Gated {
			b, err := nn.NewFeedForward(g, name, nn.FeedForwardConfig{Dim: d, Hidden: hidden, Activation: kind.Act})
			if err != nil {
				return nil, err
			}
			return b.Forward(x)
		}
		defer catch(&err)
		n := must(must(nn.NewLayerNorm(g, name+".ln", d)).Forward(x))
		a := must(nn.Sequential{must(nn.NewLinear(g, name+".fc1", d, hidden)), nn.Act(kind.Act)}.Forward(n))
		v := must(must(nn.NewLinear(g, name+".gate", d, hidden)).Forward(n))
		return fused.Add(x, must(must(nn.NewLinear(g, name+".fc2", hidden, d)).Forward(must(G.HadamardProd(a, v)))))
	}
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
