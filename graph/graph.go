package graph

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph/rng"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MaxElements is the largest number of elements Input, Param and NewTensor
// accept for one tensor: 2³⁰ by default (4 GiB of float32, 8 GiB of
// float64, about ten times GPT-2 XL's largest matrix), 2²⁶ on 32-bit
// platforms, whose whole address space is 4 GiB. A shape beyond it is
// refused with an error before anything is allocated, rather than ending
// the program with an unrecoverable out-of-memory. Raise it for larger
// models; set it before building graphs, not while another goroutine does.
var MaxElements = min(1<<30, math.MaxInt>>5)

// Graph is a gorgonia expression graph with a dtype, a seed and a registry
// of named parameters. Nodes are plain *gorgonia.Node values, so every
// gorgonia operation can be used on them.
type Graph struct {
	eg     *G.ExprGraph
	dtype  tensor.Dtype
	seed   uint64
	params []*G.Node
	inputs []*G.Node
	names  map[string]*G.Node
	sums   map[*G.Node]bool // the gradient sums Grad made (see addAll)

	training bool
	step     int
	streams  func(string) string // StreamName's mapping; nil is the identity
}

// New returns an empty graph whose inputs and parameters have the given
// dtype (tensor.Float32 or tensor.Float64). seed determines every
// parameter's initial value.
func New(dtype tensor.Dtype, seed uint64) (*Graph, error) {
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, fmt.Errorf("graph.New: dtype %v, want float32 or float64", dtype)
	}
	return &Graph{eg: G.NewGraph(), dtype: dtype, seed: seed, names: map[string]*G.Node{}, training: true}, nil
}

// ExprGraph returns the underlying gorgonia graph.
func (g *Graph) ExprGraph() *G.ExprGraph { return g.eg }

// Dtype returns the graph's dtype.
func (g *Graph) Dtype() tensor.Dtype { return g.dtype }

// Seed returns the graph's seed.
func (g *Graph) Seed() uint64 { return g.seed }

// RNG returns the random stream called name under the graph's seed (for
// dropout masks and other randomness inside the model).
func (g *Graph) RNG(name string) *rng.RNG { return rng.New(g.seed, name) }

// Training reports whether stochastic ops (dropout) are active. A new graph
// is in training mode.
func (g *Graph) Training() bool { return g.training }

// SetTraining switches stochastic ops on (training) or off (evaluation), like
// PyTorch's model.train() / model.eval(). It takes effect at the next Run.
func (g *Graph) SetTraining(on bool) { g.training = on }

// Step returns the step whose randomness (dropout masks) the next training
// Run draws. A new graph is at step 0; every training Run advances it by
// one (see Machine.Run).
func (g *Graph) Step() int { return g.step }

// SetStep sets the step the next training Run draws its randomness for,
// so that a run resumed at step s draws the same masks as an uninterrupted
// one.
func (g *Graph) SetStep(s int) { g.step = s }

// Input adds a named input of the given shape; its value is bound per run
// with Machine.Set. The shape must have at most MaxElements elements.
func (g *Graph) Input(name string, shape ...int) (*G.Node, error) {
	if err := g.checkNew("Input", name, shape); err != nil {
		return nil, err
	}
	return g.add(&g.inputs, name, shape, nil)
}

// Param adds a trainable parameter named name (PyTorch state_dict style,
// e.g. "blocks.0.fc1.weight") of the given shape, filled by init from the
// random stream rng.New(seed, name). The same seed and name give the same
// values on any machine, whatever else the graph contains. The shape must
// have at most MaxElements elements.
func (g *Graph) Param(name string, init Init, shape ...int) (*G.Node, error) {
	if err := g.checkNew("Param", name, shape); err != nil {
		return nil, err
	}
	if init == nil {
		return nil, fmt.Errorf("graph.Param %q: init is nil", name)
	}
	v, err := NewTensor(g.dtype, init, rng.New(g.seed, name), shape...)
	if err != nil {
		return nil, fmt.Errorf("graph.Param %q: %w", name, err)
	}
	return g.add(&g.params, name, shape, v)
}

// NewTensor returns a tensor of dtype (float32 or float64) and shape filled
// by init from r, the way Param fills a parameter (in float64, then rounded
// once): seeded data for benchmarks and tests, e.g.
//
//	x, err := graph.NewTensor(tensor.Float32, graph.Normal(0, 1), rng.New(1, "x"), 128, 784)
func NewTensor(dtype tensor.Dtype, init Init, r *rng.RNG, shape ...int) (*tensor.Dense, error) {
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, fmt.Errorf("graph.NewTensor: dtype %v, want float32 or float64", dtype)
	}
	if init == nil || r == nil {
		return nil, fmt.Errorf("graph.NewTensor: init or random stream is nil")
	}
	n, err := elements(shape)
	if err != nil {
		return nil, fmt.Errorf("graph.NewTensor: %w", err)
	}
	vals := make([]float64, n)
	if err := fill(init, vals, shape, r); err != nil {
		return nil, err
	}
	return FromFloat64s(dtype, vals, shape...)
}

// fill calls init.Fill, turning a panic (in an initializer written by a
// user) into an error.
func fill(init Init, dst []float64, shape []int, r *rng.RNG) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("graph.NewTensor: the initializer panicked: %v", p)
		}
	}()
	return init.Fill(dst, shape, r)
}

// NamedTensor is a tensor with a PyTorch state_dict-style name. It is the
// currency of optimizers and checkpoints.
type NamedTensor struct {
	Name  string
	Value *tensor.Dense
}

// ParamTensors returns every parameter's name and value tensor, in creation
// order. The tensors are the parameters themselves: writing into them (an
// optimizer step, loading a checkpoint) changes the model.
func (g *Graph) ParamTensors() []NamedTensor {
	out := make([]NamedTensor, len(g.params))
	for i, p := range g.params {
		out[i] = NamedTensor{Name: p.Name(), Value: p.Value().(*tensor.Dense)}
	}
	return out
}

// NumParams returns the number of trainable scalars: the total size of
// every parameter.
func (g *Graph) NumParams() (n int) {
	for _, p := range g.params {
		n += p.Shape().TotalSize()
	}
	return n
}

// Params returns the parameters in the order they were created.
func (g *Graph) Params() []*G.Node { return append([]*G.Node(nil), g.params...) }

// Inputs returns the inputs in the order they were created.
func (g *Graph) Inputs() []*G.Node { return append([]*G.Node(nil), g.inputs...) }

// Lookup returns the input or parameter with the given name.
func (g *Graph) Lookup(name string) (*G.Node, bool) {
	n, ok := g.names[name]
	return n, ok
}

// IsParam reports whether n is one of the graph's parameters.
func (g *Graph) IsParam(n *G.Node) bool {
	for _, p := range g.params {
		if p == n {
			return true
		}
	}
	return false
}

func (g *Graph) checkNew(what, name string, shape []int) error {
	if err := g.check(); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("graph.%s: empty name", what)
	}
	if _, dup := g.names[name]; dup {
		return fmt.Errorf("graph.%s %q: name already used", what, name)
	}
	if _, err := elements(shape); err != nil {
		return fmt.Errorf("graph.%s %q: %w", what, name, err)
	}
	return nil
}

// check refuses a Graph that New did not make (nil or the zero value),
// whose nil maps would panic.
func (g *Graph) check() error {
	if g == nil || g.eg == nil || g.names == nil {
		return fmt.Errorf("graph: the Graph was not made by graph.New")
	}
	return nil
}

// add creates the node name (holding v unless v is nil) and records it in
// list (g.inputs or g.params) and under its name.
func (g *Graph) add(list *[]*G.Node, name string, shape []int, v *tensor.Dense) (*G.Node, error) {
	n, err := newTensor(g.eg, g.dtype, name, shape, v)
	if err != nil {
		return nil, err
	}
	*list = append(*list, n)
	g.names[name] = n
	return n, nil
}

func newTensor(eg *G.ExprGraph, dt tensor.Dtype, name string, shape []int, v *tensor.Dense) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("graph: creating %q %v: %v", name, shape, r)
		}
	}()
	opts := []G.NodeConsOpt{G.WithName(name), G.WithShape(shape...)}
	if v != nil {
		opts = append(opts, G.WithValue(v))
	}
	return G.NewTensor(eg, dt, len(shape), opts...), nil
}

// SameShape reports whether two shapes have the same dimensions in the same
// order. Unlike tensor.Shape.Eq it does not treat (n), (1, n) and (n, 1) as
// equal.
func SameShape(a, b tensor.Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// elements returns the number of elements of shape, checking that every
// dimension is at least 1, that the product fits an int and that it is at
// most MaxElements, so that no allocation is ever sized by a bad shape.
func elements(shape []int) (int, error) {
	if len(shape) == 0 {
		return 0, fmt.Errorf("no shape given; scalars are not supported, use shape (1)")
	}
	for _, d := range shape {
		if d <= 0 {
			return 0, fmt.Errorf("shape %v has a non-positive dimension", shape)
		}
	}
	n, ok := product(shape)
	if !ok {
		return 0, fmt.Errorf("shape %v: the number of elements overflows an int", shape)
	}
	if n > MaxElements {
		return 0, fmt.Errorf("shape %v has %d elements, more than graph.MaxElements = %d", shape, n, MaxElements)
	}
	return n, nil
}

// product returns the product of the dimensions, and false if one is not
// positive or the product overflows an int.
func product(shape []int) (int, bool) {
	p := 1
	for _, d := range shape {
		if d <= 0 || p > math.MaxInt/d {
			return 0, false
		}
		p *= d
	}
	return p, true
}

// Float is the set of element types the project computes in. Types defined
// over float32 or float64 are included, so a kernel can take a user's own
// float type.
type Float interface{ ~float32 | ~float64 }
