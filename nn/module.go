package nn

import (
	"fmt"

	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
)

// Module is a layer: Forward adds it to the graph of x and returns its
// output node.
type Module interface {
	Forward(x *G.Node) (*G.Node, error)
}

// Sequential applies modules in order, like torch.nn.Sequential.
type Sequential []Module

// Forward runs x through every module.
func (s Sequential) Forward(x *G.Node) (*G.Node, error) {
	for i, m := range s {
		var err error
		if x, err = m.Forward(x); err != nil {
			return nil, fmt.Errorf("nn.Sequential layer %d: %w", i, err)
		}
	}
	return x, nil
}

// Act returns the activation a as a Module; the zero Activation means GELU.
func Act(a activation.Activation) Module { return actModule{orDefault(a)} }

type actModule struct{ a activation.Activation }

func (m actModule) Forward(x *G.Node) (*G.Node, error) { return m.a.Apply(x) }

func orDefault(a activation.Activation) activation.Activation {
	if a.IsZero() {
		return activation.GELU
	}
	return a
}

// join builds a state_dict name: join("blocks.0", "fc1") = "blocks.0.fc1".
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
