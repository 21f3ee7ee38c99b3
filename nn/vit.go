package nn

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
)

// ViTConfig describes a Vision Transformer encoder for square one-channel
// images (MNIST: 28×28).
type ViTConfig struct {
	ImageSize int // side of the image in pixels (28)
	PatchSize int // side of a patch; must divide ImageSize (7 gives 16 patches)
	Dim       int // model width d
	Heads     int // attention heads; must divide Dim
	Layers    int // encoder blocks
	Classes   int // outputs of the classifier head (10)
	// Hidden, Activation and Gate choose the blocks' MLP as in BlockConfig.
	Hidden     int
	Activation activation.Activation
	Gate       Gate
	Dropout    float64 // as in BlockConfig, and after the embeddings
	Eps        float64 // LayerNorm ε; 0 means 1e-5
}

// ViT is Dosovitskiy et al.'s encoder: the image cut into patches, each
// flattened through the Linear patch_embed, a learned cls_token in front,
// learned positions pos_embed, pre-LN non-causal blocks blocks.<i>.*, a
// final LayerNorm norm and the Linear classifier head on the [CLS] row.
type ViT struct {
	Name       string // the prefix of the parameters' names
	Config     ViTConfig
	PatchEmbed *Linear
	CLS        *G.Node // cls_token (Dim), zero at init
	Pos        *G.Node // pos_embed (patches+1 × Dim), N(0, 0.02) at init
	Blocks     []*Block
	Norm       *LayerNorm
	Head       *Linear
	Drop       *Dropout
	g          *graph.Graph
	patches    int
}

// NewViT adds the model's parameters to g under name ("" for the names
// above at the root).
func NewViT(g *graph.Graph, name string, cfg ViTConfig) (*ViT, error) {
	if cfg.ImageSize <= 0 || cfg.PatchSize <= 0 || cfg.ImageSize%cfg.PatchSize != 0 {
		return nil, fmt.Errorf("nn.ViT: PatchSize = %d does not divide ImageSize = %d", cfg.PatchSize, cfg.ImageSize)
	}
	if cfg.Layers <= 0 || cfg.Classes <= 0 {
		return nil, fmt.Errorf("nn.ViT: Layers = %d, Classes = %d, want both > 0", cfg.Layers, cfg.Classes)
	}
	if cfg.Dim <= 0 || cfg.Heads <= 0 || cfg.Dim%cfg.Heads != 0 {
		return nil, fmt.Errorf("nn.ViT: Dim = %d, Heads = %d, want Heads > 0 dividing Dim > 0", cfg.Dim, cfg.Heads)
	}
	side := cfg.ImageSize / cfg.PatchSize
	v := &ViT{Name: name, Config: cfg, g: g, patches: side * side}
	var err error
	if v.PatchEmbed, err = NewLinear(g, join(name, "patch_embed"), cfg.PatchSize*cfg.PatchSize, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if v.CLS, err = g.Param(join(name, "cls_token"), graph.Zeros(), cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if v.Pos, err = g.Param(join(name, "pos_embed"), graph.Normal(0, 0.02), v.patches+1, cfg.Dim); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if v.Drop, err = NewDropout(g, join(name, "pos_drop"), cfg.Dropout); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	for i := 0; i < cfg.Layers; i++ {
		b, err := NewBlock(g, join(name, fmt.Sprintf("blocks.%d", i)), BlockConfig{
			Dim: cfg.Dim, Heads: cfg.Heads, Hidden: cfg.Hidden, Activation: cfg.Activation, Gate: cfg.Gate,
			Dropout: cfg.Dropout, Eps: cfg.Eps,
		})
		if err != nil {
			return nil, fmt.Errorf("nn.ViT: %w", err)
		}
		v.Blocks = append(v.Blocks, b)
	}
	if v.Norm, err = NewLayerNorm(g, join(name, "norm"), cfg.Dim, Eps(orDefaultEps(cfg.Eps))); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if v.Head, err = NewLinear(g, join(name, "head"), cfg.Dim, cfg.Classes); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	return v, nil
}

// Patches returns, for a batch of images (batch × ImageSize²) flattened
// row by row, the flat indices that cut them into patches: row b·N + p of
// the (batch·N × PatchSize²) result is patch p (patches in row-major order
// over the grid, pixels row-major inside a patch), as PyTorch's
// x.reshape(B, s, P, s, P).permute(0, 1, 3, 2, 4).reshape(B, s·s, P·P).
func (v *ViT) Patches(batch int) []int {
	n, p := v.Config.ImageSize, v.Config.PatchSize
	side := n / p
	idx := make([]int, 0, batch*n*n)
	for b := 0; b < batch; b++ {
		for pi := 0; pi < side; pi++ {
			for pj := 0; pj < side; pj++ {
				for r := 0; r < p; r++ {
					for c := 0; c < p; c++ {
						idx = append(idx, b*n*n+(pi*p+r)*n+pj*p+c)
					}
				}
			}
		}
	}
	return idx
}

// Forward returns the class logits (batch × Classes) of images (batch ×
// ImageSize²).
func (v *ViT) Forward(images *G.Node) (*G.Node, error) {
	if v == nil || v.g == nil || v.PatchEmbed == nil || v.CLS == nil || v.Pos == nil || v.Norm == nil || v.Head == nil || len(v.Blocks) != v.Config.Layers {
		return nil, fmt.Errorf("nn.ViT: nil or unbuilt ViT, want one made by nn.NewViT")
	}
	n := v.Config.ImageSize
	if images == nil || images.Dims() != 2 || images.Shape()[1] != n*n {
		return nil, fmt.Errorf("nn.ViT: images have shape %v, want (batch, %d) (%d×%d pixels)", shapeOf(images), n*n, n, n)
	}
	batch, p2 := images.Shape()[0], v.Config.PatchSize*v.Config.PatchSize
	patches, err := fused.Gather(images, v.Patches(batch), batch*v.patches, p2)
	if err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	x, err := v.PatchEmbed.Forward(patches)
	if err != nil {
		return nil, err
	}
	if x, err = fused.PrependRow(x, v.CLS, batch); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	pos, err := positionEmbedding(v.g, v.Pos, join(v.Name, "pos_embed.ids"), batch, v.patches+1)
	if err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if x, err = fused.Add(x, pos); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	if x, err = v.Drop.Forward(x); err != nil {
		return nil, err
	}
	for _, b := range v.Blocks {
		if x, err = b.forward(x, batch, nil); err != nil {
			return nil, fmt.Errorf("nn.ViT: %w", err)
		}
	}
	if x, err = v.Norm.Forward(x); err != nil {
		return nil, err
	}
	cls := make([]int, 0, batch*v.Config.Dim)
	for b := 0; b < batch; b++ {
		for j := 0; j < v.Config.Dim; j++ {
			cls = append(cls, b*(v.patches+1)*v.Config.Dim+j)
		}
	}
	if x, err = fused.Gather(x, cls, batch, v.Config.Dim); err != nil {
		return nil, fmt.Errorf("nn.ViT: %w", err)
	}
	return v.Head.Forward(x)
}

// Parameters returns patch_embed's, cls_token, pos_embed, the blocks',
// norm's and head's, in that order.
func (v *ViT) Parameters() []*G.Node {
	if v == nil {
		return nil
	}
	parts := []any{v.PatchEmbed, v.CLS, v.Pos}
	for _, b := range v.Blocks {
		parts = append(parts, b)
	}
	return params(append(parts, v.Norm, v.Head)...)
}

// Prefix returns Name, the prefix of the parameters' names.
func (v *ViT) Prefix() string {
	if v == nil {
		return ""
	}
	return v.Name
}

// Args returns every field that changes the function: image_size,
// patch_size, dim, heads, layers, classes, hidden, the activation or gate,
// and eps (not Dropout).
func (v *ViT) Args() map[string]string {
	if v == nil {
		return nil
	}
	c := v.Config
	hidden := c.Hidden
	if len(v.Blocks) > 0 {
		hidden = v.Blocks[0].Config.Hidden
	}
	a := map[string]string{"image_size": itoa(c.ImageSize), "patch_size": itoa(c.PatchSize), "dim": itoa(c.Dim), "heads": itoa(c.Heads),
		"layers": itoa(c.Layers), "classes": itoa(c.Classes), "hidden": itoa(hidden), "eps": ftoa(orDefaultEps(c.Eps))}
	addMLPKind(a, c.Activation, c.Gate)
	return a
}
