package opkit

// Base: the methods every op repeats (arity, type, hash, name, which inputs
// get a gradient, SymDiff and DoDiff), filled in once from a description of
// the op, so that an op's own file holds its Do and its backward rule.

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"slices"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Base is embedded in an op and answers every G.Op method but Do from the
// fields its constructor sets. An op overrides any of them by defining the
// method itself (InferShape, most often).
type Base struct {
	Defaults
	// Name is what String returns, in errors and graph dumps.
	Name string
	// Key is what WriteHash writes: the op's kind and every parameter, or
	// gorgonia merges two nodes that differ only in a parameter.
	Key string
	// Dims holds each input's number of dimensions, then the result's
	// (0: a scalar); Arity is len(Dims)−1 and Type is FnType(Dims...).
	Dims []int
	// ShapeOf is the input whose shape the result has, for the default
	// InferShape.
	ShapeOf int
	// WRT says which inputs get a gradient (DiffWRT); nil means all.
	WRT []bool
	// Backward is the op's gradient rule, run by both SymDiff (on nodes)
	// and DoDiff (on values); nil means the op is not differentiable.
	Backward func(*Grads)
}

func (b *Base) String() string { return b.Name }
func (b *Base) Arity() int     { return len(b.Dims) - 1 }

// Type is a fresh value each call, as gorgonia mutates the types it is given.
func (b *Base) Type() hm.Type { return FnType(b.Dims...) }

func (b *Base) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return ShapeArg(b, ds, b.ShapeOf)
}

func (b *Base) WriteHash(h hash.Hash) { io.WriteString(h, b.Key) }

// Hashcode is HashOf(op): the FNV-1a hash of what WriteHash writes.
func (b *Base) Hashcode() uint32 {
	h := fnv.New32a()
	b.WriteHash(h)
	return h.Sum32()
}

func (b *Base) DiffWRT(n int) []bool {
	if b.WRT != nil {
		return b.WRT
	}
	return AllTrue(n)
}

// SymDiff runs Backward on nodes, for symbolic differentiation (graph.Grad).
func (b *Base) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if err := b.diffable(len(inputs)); err != nil {
		return nil, err
	}
	gs := &Grads{op: b, inputs: inputs, output: Ref{n: output}, grad: Ref{n: grad}, sym: make(G.Nodes, len(inputs))}
	b.Backward(gs)
	if gs.err != nil {
		return nil, gs.err
	}
	return gs.sym, nil
}

// DoDiff runs Backward on values and adds the results into the inputs'
// gradients, for the LispMachine. An op none of whose inputs gets a
// gradient (one that computes forward state for another op's backward)
// adds nothing.
func (b *Base) DoDiff(ctx G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	if b.WRT != nil && !slices.Contains(b.WRT, true) {
		return nil
	}
	if err := b.diffable(len(inputs)); err != nil {
		return err
	}
	gv, err := OutGrad(b, output)
	if err != nil {
		return err
	}
	gs := &Grads{op: b, inputs: inputs, output: Ref{v: output.Value()}, grad: Ref{v: gv}}
	b.Backward(gs)
	return gs.err
}

func (b *Base) diffable(n int) error {
	if n != b.Arity() {
		return fmt.Errorf("%v: differentiating with %d inputs, want %d", b, n, b.Arity())
	}
	if b.Backward == nil {
		return fmt.Errorf("%v: not differentiable", b)
	}
	return nil
}

// NotImplemented is a Backward that reports what is missing, for the
// backward ops of ops without a second derivative.
func NotImplemented(what string) func(*Grads) {
	return func(gs *Grads) {
		gs.Fail(fmt.Errorf("%v: %s is not implemented", gs.op, what))
	}
}

// Ref is one quantity of a gradient rule: a node while SymDiff builds the
// backward graph, a value while DoDiff computes it.
type Ref struct {
	n *G.Node
	v G.Value
}

// Grads is what a Backward rule works with: the op's inputs, output and
// upstream gradient, Apply for the ops of the backward pass, and Set for
// each input's gradient. The first error stops the rule: later calls do
// nothing, and SymDiff or DoDiff returns it.
type Grads struct {
	op     fmt.Stringer
	inputs G.Nodes
	output Ref
	grad   Ref
	sym    G.Nodes // the gradients SymDiff returns; nil in DoDiff
	err    error
}

// Node returns input i's node (for its shape).
func (gs *Grads) Node(i int) *G.Node { return gs.inputs[i] }

// Input returns input i.
func (gs *Grads) Input(i int) Ref {
	if gs.sym != nil {
		return Ref{n: gs.inputs[i]}
	}
	return Ref{v: gs.inputs[i].Value()}
}

// Inputs returns every input, in order.
func (gs *Grads) Inputs() []Ref {
	rs := make([]Ref, len(gs.inputs))
	for i := range rs {
		rs[i] = gs.Input(i)
	}
	return rs
}

// Output returns the op's result.
func (gs *Grads) Output() Ref { return gs.output }

// Grad returns the upstream gradient, of the output's shape.
func (gs *Grads) Grad() Ref { return gs.grad }

// Apply returns op applied to args: a new node, or op.Do's value.
func (gs *Grads) Apply(op G.Op, args ...Ref) Ref {
	if gs.err != nil {
		return Ref{}
	}
	if gs.sym != nil {
		ns := make([]*G.Node, len(args))
		for i, a := range args {
			ns[i] = a.n
		}
		n, err := Apply(op, ns...)
		gs.err = err
		return Ref{n: n}
	}
	vs := make([]G.Value, len(args))
	for i, a := range args {
		vs[i] = a.v
	}
	v, err := op.Do(vs...)
	gs.err = err
	return Ref{v: v}
}

// Set makes r the gradient of input i (DoDiff adds it into the input's
// gradient).
func (gs *Grads) Set(i int, r Ref) {
	if gs.err != nil {
		return
	}
	if gs.sym != nil {
		gs.sym[i] = r.n
		return
	}
	gs.err = AccumulateGrad(gs.op, gs.inputs[i], r.v)
}

// Fail stops the rule with err (the first error is kept).
func (gs *Grads) Fail(err error) {
	if gs.err == nil {
		gs.err = err
	}
}
