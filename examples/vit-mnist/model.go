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
	G "gorgonia.org/gorgonia"
)

const (
	side    = 28           // image side in pixels
	patch   = 7            // patch side in pixels
	grid    = side / patch // patches per side
	tokens  = grid * grid  // patches per image
	classes = 10
)

// mlpKind is a feed-forward variant: an activation, or a gate (Shazeer
// 2020: act(xW)⊙(xV), then W2) from nn.
type mlpKind struct {
	Act  activation.Activation // the ungated MLP's, or the gate's
	Gate nn.Gate               // zero: ungated
}

// Gated reports whether the MLP has a second input projection.
func (k mlpKind) Gated() bool { return !k.Gate.IsZero() }

// mlpKinds are the -mlp names.
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
	DModel, Heads, Blocks, FF int
	MLP                       string
}

// hidden is FF for an ungated MLP and nn.GatedHidden(FF), 2/3 of it, for a
// gated one (equal parameters, as in Shazeer 2020).
func (c modelConfig) hidden() int {
	if mlpKinds[c.MLP].Gated() {
		return nn.GatedHidden(c.FF)
	}
	return c.FF
}

// vit is the nn.ViTConfig: 28×28 images in 16 patches of 7×7, no dropout,
// the MLP of c.MLP.
func (c modelConfig) vit() nn.ViTConfig {
	kind := mlpKinds[c.MLP]
	cfg := nn.ViTConfig{ImageSize: side, PatchSize: patch, Dim: c.DModel, Heads: c.Heads, Layers: c.Blocks, Classes: classes,
		Hidden: c.hidden(), Gate: kind.Gate}
	if !kind.Gated() {
		cfg.Activation = kind.Act
	}
	return cfg
}

// buildModel adds nn.ViT to g and returns the class logits (rows × 10)
// for x, rows images of 28×28 pixels in row-major order: each image cut
// into 16 patches of 7×7, each patch projected to width DModel, a learned
// [CLS] token in front, learned position embeddings, Blocks pre-LN
// Transformer encoder blocks (non-causal self-attention, then the MLP), a
// final LayerNorm and a Linear head on the [CLS] row.
func buildModel(g *graph.Graph, x *G.Node, c modelConfig) (logits *G.Node, err error) {
	if _, ok := mlpKinds[c.MLP]; !ok {
		return nil, fmt.Errorf("-mlp %q: want one of %s", c.MLP, mlpNames())
	}
	v, err := nn.NewViT(g, c.vit())
	if err != nil {
		return nil, err
	}
	return v.Forward(x)
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
