package nn

import (
	"fmt"
	"strconv"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Module is a layer or a model (torch.nn.Module): Forward adds it to the
// graph of x and returns its output node; Parameters returns the
// parameters it owns, in the order they were created, each once (a tied
// weight appears where it was first created), under their full graph
// names. Every layer and model of this package is a Module.
//
// A module built under a name (every constructor here takes one) also has
// Prefix() string, the start of its parameters' names; StateDict and
// NamedParameters give names relative to it, as PyTorch's m.state_dict()
// does. A module of your own may have Prefix too.
type Module interface {
	Forward(x *G.Node) (*G.Node, error)
	Parameters() []*G.Node
}

// ParamTensors returns m's parameters as the optimizers take them: full
// graph names (so two models in one graph never share an optimizer state
// key) and the parameter tensors themselves, in m.Parameters' order.
// Writing into them changes the model (call graph.MarkParamsChanged after
// writing by hand).
func ParamTensors(m Module) ([]graph.NamedTensor, error) {
	ps, err := parametersOf(m)
	if err != nil {
		return nil, err
	}
	out := make([]graph.NamedTensor, len(ps))
	for i, p := range ps {
		d, ok := p.Value().(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("nn: parameter %q holds a %T, want a *tensor.Dense", p.Name(), p.Value())
		}
		out[i] = graph.NamedTensor{Name: p.Name(), Value: d}
	}
	return out, nil
}

// parametersOf returns m.Parameters(), refusing a nil module or parameter
// and a repeated one, and turning a panic (a nil pointer inside a module of
// the user's own) into an error.
func parametersOf(m Module) (ps []*G.Node, err error) {
	if m == nil {
		return nil, fmt.Errorf("nn: nil module")
	}
	defer func() {
		if r := recover(); r != nil {
			ps, err = nil, fmt.Errorf("nn: %T.Parameters panicked: %v", m, r)
		}
	}()
	ps = m.Parameters()
	seen := make(map[*G.Node]bool, len(ps))
	for i, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("nn: %T.Parameters()[%d] is nil", m, i)
		}
		if seen[p] {
			return nil, fmt.Errorf("nn: %T.Parameters() lists %q twice", m, p.Name())
		}
		seen[p] = true
	}
	return ps, nil
}

// params collects parameters from nodes and modules in order, skipping nil
// ones (an absent bias) and any node already listed (a tied weight).
func params(parts ...any) []*G.Node {
	var out []*G.Node
	seen := map[*G.Node]bool{}
	add := func(n *G.Node) {
		if n != nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, p := range parts {
		switch p := p.(type) {
		case *G.Node:
			add(p)
		case Module:
			if p != nil {
				for _, n := range p.Parameters() {
					add(n)
				}
			}
		}
	}
	return out
}

// Sequential applies modules in order, like torch.nn.Sequential; the zero
// Sequential is the identity.
type Sequential []Module

// Forward runs x through every module.
func (s Sequential) Forward(x *G.Node) (*G.Node, error) {
	for i, m := range s {
		if m == nil {
			return nil, fmt.Errorf("nn.Sequential layer %d is nil", i)
		}
		var err error
		if x, err = m.Forward(x); err != nil {
			return nil, fmt.Errorf("nn.Sequential layer %d: %w", i, err)
		}
	}
	return x, nil
}

// Parameters returns the layers' parameters in order, each once.
func (s Sequential) Parameters() []*G.Node {
	parts := make([]any, len(s))
	for i, m := range s {
		parts[i] = m
	}
	return params(parts...)
}

// Args returns the layers' Args, each key prefixed by the layer's index
// ("2.activation"), for the layers that have Args.
func (s Sequential) Args() map[string]string {
	out := map[string]string{}
	for i, m := range s {
		a, ok := m.(interface{ Args() map[string]string })
		if !ok {
			continue
		}
		for k, v := range a.Args() {
			out[strconv.Itoa(i)+"."+k] = v
		}
	}
	return out
}

// Act returns the activation a as a Module without parameters; the zero
// Activation means GELU.
func Act(a activation.Activation) Module { return actModule{orDefault(a)} }

type actModule struct{ a activation.Activation }

func (m actModule) Forward(x *G.Node) (*G.Node, error) { return m.a.Apply(x) }

func (m actModule) Parameters() []*G.Node { return nil }

// Args names the activation.
func (m actModule) Args() map[string]string { return map[string]string{"activation": m.a.Name()} }

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

// The Args values: numbers and flags as Go prints them, floats exactly.
func itoa(v int) string     { return strconv.Itoa(v) }
func btoa(v bool) string    { return strconv.FormatBool(v) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
