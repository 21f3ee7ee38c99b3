package main

// The model boundary. buildModel is the one function that knows the
// network; everything else sees only the logits it returns.

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

const (
	side    = 28           // image side in pixels
	patch   = 7            // patch side in pixels
	grid    = side / patch // patches per side
	tokens  = grid * grid  // patches per image
	classes = 10
)

// mlpKind is a feed-forward variant: an activation, and whether it gates a
// second linear projection (Shazeer 2020: act(xW)⊙(xV), then W2).
type mlpKind struct {
	Act   activation.Activation
	Gated bool
}

// mlpKinds are the -mlp names.
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

// modelConfig fixes the parameter shapes. Heads is the intended ViT's; the
// stand-in has no attention and ignores it.
type modelConfig struct {
	DModel, Heads, Blocks, FF int
	MLP                       string
}

// hidden is FF for an ungated MLP and 2/3 of it for a gated one (equal
// parameters, as in Shazeer 2020).
func (c modelConfig) hidden() int {
	if mlpKinds[c.MLP].Gated {
		return 2 * c.FF / 3
	}
	return c.FF
}

// params counts the trainable scalars from the shapes.
func (c modelConfig) params() int {
	d, h := c.DModel, c.hidden()
	block := 2*d + d*h + h + h*d + d
	if mlpKinds[c.MLP].Gated {
		block += d*h + h
	}
	return patch*patch*d + d + tokens*d + c.Blocks*block + 2*d + d*classes + classes
}

// buildModel adds the network to g and returns the class logits (rows ×
// 10) for x, rows images of 28×28 pixels in row-major order.
//
// STAND-IN until nn.GPT / nn.ViT land: no attention, so patches never
// exchange information before the pooling. Each 7×7 patch is flattened
// and projected to width DModel (patch_embed), a learned position
// embedding is added (pos_embed), then Blocks pre-LN feed-forward blocks
// act on each patch, the patches are summed (a mean, once normalized), and a LayerNorm and a
// Linear give the logits. nn.ViT will take the same x and return the same
// logits.
func buildModel(g *graph.Graph, x *G.Node, c modelConfig, recompute bool) (logits *G.Node, err error) {
	kind, ok := mlpKinds[c.MLP]
	if !ok {
		return nil, fmt.Errorf("-mlp %q: want one of %s", c.MLP, mlpNames())
	}
	defer catch(&err)
	rows, d := x.Shape()[0], c.DModel
	h := must(must(nn.NewLinear(g, "patch_embed", patch*patch, d)).Forward(must(patches(x))))
	pos := must(fused.BroadcastRows(must(g.Param("pos_embed", graph.Normal(0, 0.02), tokens*d)), rows))
	h = must(G.Reshape(must(fused.Add(must(G.Reshape(h, []int{rows, tokens * d})), pos)), []int{rows * tokens, d}))
	names := make([]string, c.Blocks)
	for i := range names {
		names[i] = fmt.Sprintf("blocks.%d.mlp", i)
	}
	if c.Blocks > 0 {
		h = must(nn.Stack(g, h, names, recompute, mlpBlock(d, c.hidden(), kind)))
	}
	// The sum over patches, not the mean: the LayerNorm after it removes
	// the factor 16 (up to its eps), and G.Mean's divisor is a node the
	// project's graph.Grad refuses to differentiate.
	h = must(G.Sum(must(G.Reshape(h, []int{rows, tokens, d})), 1))
	return nn.Sequential{must(nn.NewLayerNorm(g, "norm", d)), must(nn.NewLinear(g, "head", d, classes))}.Forward(h)
}

// patches cuts rows images (rows × 784, row-major) into their 16 patches
// (rows·16 × 49), patch by patch in row-major order, each patch's pixels
// row-major: (rows, 784) → (rows, 4, 7, 4, 7) → (rows, 4, 4, 7, 7) → (rows·16, 49).
func patches(x *G.Node) (*G.Node, error) {
	rows := x.Shape()[0]
	h, err := G.Reshape(x, []int{rows, grid, patch, grid, patch})
	if err == nil {
		h, err = G.Transpose(h, 0, 1, 3, 2, 4)
	}
	if err == nil {
		h, err = G.Reshape(h, []int{rows * tokens, patch * patch})
	}
	return h, err
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
