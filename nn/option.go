package nn

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/graph"
)

// Option changes how one of the PyTorch primitives (NewLinear,
// NewLayerNorm, NewEmbedding) builds its layer, as a keyword argument of
// the torch constructor does (bias=False, eps=1e-12). Each layer takes the
// options PyTorch's has; any other is an error naming it.
type Option func(*options)

// options is what the options set, for the layer named in layer.
type options struct {
	layer      string // "Linear", "LayerNorm" or "Embedding"
	bias       bool
	affine     bool
	eps        float64
	weightInit graph.Init
	biasInit   graph.Init
	wrong      []string // options the layer does not take
}

// want records name as not applying unless the layer is one of layers.
func (o *options) want(name string, layers ...string) bool {
	for _, l := range layers {
		if o.layer == l {
			return true
		}
	}
	o.wrong = append(o.wrong, name)
	return false
}

// NoBias leaves out the bias: torch.nn.Linear(bias=False) and
// torch.nn.LayerNorm(bias=False) (y = γ·x̂, no β).
func NoBias() Option {
	return func(o *options) {
		if o.want("NoBias", "Linear", "LayerNorm") {
			o.bias = false
		}
	}
}

// Eps sets a LayerNorm's ε. 0 means PyTorch's default 1e-5, as the Eps
// field of every configuration in this package does (BERT uses 1e-12).
func Eps(eps float64) Option {
	return func(o *options) {
		if o.want("Eps", "LayerNorm") {
			o.eps = eps
		}
	}
}

// NoAffine leaves out a LayerNorm's γ and β (elementwise_affine=False).
func NoAffine() Option {
	return func(o *options) {
		if o.want("NoAffine", "LayerNorm") {
			o.affine = false
		}
	}
}

// WeightInit replaces PyTorch's default initialization of a Linear's or an
// Embedding's weight.
func WeightInit(init graph.Init) Option {
	return func(o *options) {
		if o.want("WeightInit", "Linear", "Embedding") {
			o.weightInit = init
		}
	}
}

// BiasInit replaces PyTorch's default initialization of a Linear's bias.
func BiasInit(init graph.Init) Option {
	return func(o *options) {
		if o.want("BiasInit", "Linear") {
			o.biasInit = init
		}
	}
}

// applyOptions returns the defaults d with opts applied, or an error
// naming the options that layer (d.layer) does not take.
func applyOptions(d options, name string, opts []Option) (options, error) {
	for i, o := range opts {
		if o == nil {
			return d, fmt.Errorf("nn.%s %q: option %d is nil", d.layer, name, i)
		}
		o(&d)
	}
	if len(d.wrong) > 0 {
		return d, fmt.Errorf("nn.%s %q: option %s does not apply to a %s", d.layer, name, strings.Join(d.wrong, ", "), d.layer)
	}
	return d, nil
}
