package nn

// A stack of identical blocks, with optional activation recomputation
// (gradient checkpointing): instead of keeping every block's intermediate
// values for the backward pass, the outer graph keeps only each block's
// input and output, and the backward pass runs the block forward again.
//
// How: the block is built once more in a graph of its own (the template),
// compiled into two machines, forward-only and forward+backward. Block i is
// one op in the outer graph whose inputs are x_i and block i's parameters;
// its forward binds them to the template and runs the forward machine; its
// gradient ops run the forward+backward machine with the upstream gradient
// dy as the seed of Σ(y ⊙ dy), whose gradient with respect to y is dy
// exactly. All blocks share the template's buffers, so memory holds one
// block's intermediates instead of N. The template computes with the same
// ops in the same order as the plain chain, so gradients are bit-identical.

import (
	"fmt"
	"hash"
	"strings"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BlockFunc builds one block under the state_dict prefix name on g and
// returns its output for input x. Its parameters must depend only on name
// and the graph's seed (as every nn layer's do).
type BlockFunc func(g *graph.Graph, name string, x *G.Node) (*G.Node, error)

// Stack returns y = block_{n−1}(… block_0(x)), block i built by build under
// names[i]. Parameters the blocks name that g already has (built earlier,
// e.g. by a model's constructor) are used as they are; the others are added. With recompute false it is the plain chain; with recompute true
// each block keeps only its input during the forward pass and runs again in
// the backward pass (see the file comment): the same values and gradients,
// bit for bit, for much less memory and one more forward pass of each
// block. Recomputed blocks support graph.Compile's machine and
// first derivatives only.
func Stack(g *graph.Graph, x *G.Node, names []string, recompute bool, build BlockFunc) (*G.Node, error) {
	if g == nil || x == nil || build == nil {
		return nil, fmt.Errorf("nn.Stack: nil graph, input or build function")
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("nn.Stack: no blocks")
	}
	if !recompute {
		for _, name := range names {
			var err error
			if x, err = build(g, name, x); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	t, err := newTemplate(g, x, names, build)
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		aux, err := graph.New(g.Dtype(), g.Seed())
		if err != nil {
			return nil, err
		}
		xi, err := aux.Input("x", x.Shape()...)
		if err != nil {
			return nil, err
		}
		if _, err := build(aux, name, xi); err != nil {
			return nil, fmt.Errorf("nn.Stack block %q: %w", name, err)
		}
		ps := aux.ParamTensors()
		if len(ps) != len(t.params) {
			return nil, fmt.Errorf("nn.Stack block %q: %d parameters, but block %q has %d", name, len(ps), names[0], len(t.params))
		}
		inputs := []*G.Node{x}
		for k, p := range ps {
			if !graph.SameShape(p.Value.Shape(), t.params[k].Shape()) {
				return nil, fmt.Errorf("nn.Stack block %q: parameter %q has shape %v, block %q's has %v", name, p.Name, p.Value.Shape(), names[0], t.params[k].Shape())
			}
			n, err := outerParam(g, p)
			if err != nil {
				return nil, fmt.Errorf("nn.Stack block %q: %w", name, err)
			}
			inputs = append(inputs, n)
		}
		op := &recomputeOp{t: t, block: i, name: name}
		if x, err = opkit.Apply(op, inputs...); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// outerParam returns g's parameter p.Name: the one g already has (a model
// that made its blocks before it knew the input's shape), or p's tensor
// added to g.
func outerParam(g *graph.Graph, p graph.NamedTensor) (*G.Node, error) {
	n, ok := g.Lookup(p.Name)
	if !ok {
		return g.AddParam(p.Name, p.Value)
	}
	if !g.IsParam(n) {
		return nil, fmt.Errorf("%q is a node of the graph but not a parameter", p.Name)
	}
	if !graph.SameShape(n.Shape(), p.Value.Shape()) {
		return nil, fmt.Errorf("parameter %q has shape %v in the graph, the block builds %v", p.Name, n.Shape(), p.Value.Shape())
	}
	return n, nil
}

// template is the block built once in a graph of its own, with the
// machines that run it for every block of the stack.
type template struct {
	outer    *graph.Graph // for the training flag and the step
	g        *graph.Graph
	x, y, dy *G.Node
	params   []*G.Node // the template's parameters, bound to block i's before a run
	fwd, bwd *graph.Machine
	names    []string
	gen      []int // per block: how many forward passes have run
}

func newTemplate(outer *graph.Graph, x *G.Node, names []string, build BlockFunc) (*template, error) {
	g, err := graph.New(outer.Dtype(), outer.Seed())
	if err != nil {
		return nil, err
	}
	t := &template{outer: outer, g: g, names: names, gen: make([]int, len(names))}
	if t.x, err = g.Input("x", x.Shape()...); err != nil {
		return nil, err
	}
	if t.y, err = build(g, names[0], t.x); err != nil {
		return nil, fmt.Errorf("nn.Stack block %q: %w", names[0], err)
	}
	if !graph.SameShape(t.y.Shape(), x.Shape()) {
		return nil, fmt.Errorf("nn.Stack block %q: output shape %v differs from the input's %v", names[0], t.y.Shape(), x.Shape())
	}
	t.params = g.Params()
	if t.dy, err = g.Input("dy", x.Shape()...); err != nil {
		return nil, err
	}
	prod, err := G.HadamardProd(t.y, t.dy)
	if err != nil {
		return nil, fmt.Errorf("nn.Stack: %w", err)
	}
	cost, err := G.Sum(prod)
	if err != nil {
		return nil, fmt.Errorf("nn.Stack: %w", err)
	}
	if t.fwd, err = g.Compile(nil, graph.Keep(t.y)); err != nil {
		return nil, err
	}
	wrt := append([]*G.Node{t.x}, t.params...)
	if t.bwd, err = g.Compile(cost, graph.WithRespectTo(wrt...), graph.AllowNonFinite()); err != nil {
		return nil, err
	}
	return t, nil
}

// bind points the template at block i: its input, its parameters, the
// training flag, the step, and the names of its random streams.
func (t *template) bind(i int, vs []G.Value) error {
	t.g.SetTraining(t.outer.Training())
	t.g.SetStep(t.outer.Step())
	from, to := t.names[0], t.names[i]
	t.g.SetStreamNames(func(s string) string {
		if rest, ok := strings.CutPrefix(s, from); ok && (rest == "" || rest[0] == '.') {
			return to + rest
		}
		return s
	})
	for k, n := range append([]*G.Node{t.x}, t.params...) {
		if err := G.Let(n, vs[k]); err != nil {
			return fmt.Errorf("nn.Stack block %q: binding %q: %w", t.names[i], n.Name(), err)
		}
	}
	return nil
}

// recomputeOp is block i: y = block(x, θ_i).
type recomputeOp struct {
	opkit.Defaults
	t     *template
	block int
	name  string
	out   *tensor.Dense
}

func (op *recomputeOp) Arity() int { return 1 + len(op.t.params) }

func (op *recomputeOp) Type() hm.Type { return opkit.FnType(op.t.dims()...) }

// dims are the ranks of the block's input, parameters and output.
func (t *template) dims() []int {
	dims := []int{t.x.Dims()}
	for _, p := range t.params {
		dims = append(dims, p.Dims())
	}
	return append(dims, t.y.Dims())
}

func (op *recomputeOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return op.t.y.Shape().Clone(), nil
}

func (op *recomputeOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("%v: got %d inputs, want %d", op, len(vs), op.Arity())
	}
	t := op.t
	if err := t.bind(op.block, vs); err != nil {
		return nil, err
	}
	if err := t.fwd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	t.gen[op.block]++
	y, err := t.fwd.Value(t.y)
	if err != nil {
		return nil, err
	}
	return copyInto(&op.out, y)
}

func (op *recomputeOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "nn.recompute(%p,%d)", op.t, op.block)
}
func (op *recomputeOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *recomputeOp) String() string   { return "recompute(" + op.name + ")" }

func (op *recomputeOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff returns one gradient op per input; the first of them to run in a
// backward pass runs the block forward and backward once for all.
func (op *recomputeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	c := &gradCache{fwd: op, outs: make([]*tensor.Dense, len(inputs)), gen: -1}
	args := append(append(G.Nodes(nil), inputs...), grad)
	out := make(G.Nodes, len(inputs))
	for k := range inputs {
		var err error
		if out[k], err = opkit.Apply(&recomputeGradOp{c: c, k: k}, args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DoDiff is the LispMachine's backward, which a recomputed block does not
// support: an error rather than gorgonia's silent zero gradients.
func (op *recomputeOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: recomputed blocks need graph.Compile's machine, not the LispMachine", op)
}

// gradCache holds the gradients of one block for the current backward pass.
type gradCache struct {
	fwd  *recomputeOp
	outs []*tensor.Dense // with respect to x, then each parameter
	gen  int             // the forward pass they belong to
}

func (c *gradCache) compute(vs []G.Value) error {
	t, i := c.fwd.t, c.fwd.block
	if c.gen == t.gen[i] {
		return nil
	}
	if err := t.bind(i, vs); err != nil {
		return err
	}
	if err := G.Let(t.dy, vs[len(vs)-1]); err != nil {
		return fmt.Errorf("%v: binding the upstream gradient: %w", c.fwd, err)
	}
	if err := t.bwd.Run(); err != nil {
		return fmt.Errorf("%v backward: %w", c.fwd, err)
	}
	gs, err := t.bwd.Grads()
	if err != nil {
		return err
	}
	for k, gk := range gs {
		if _, err := copyInto(&c.outs[k], gk); err != nil {
			return err
		}
	}
	c.gen = t.gen[i]
	return nil
}

// recomputeGradOp is the gradient of block i's output with respect to its
// k-th input (0: x, then the parameters), from (x, θ_i, dy).
type recomputeGradOp struct {
	opkit.Defaults
	c *gradCache
	k int
}

func (op *recomputeGradOp) Arity() int { return op.c.fwd.Arity() + 1 }

// Type takes the forward op's inputs and output gradient and returns the
// gradient of input k, of input k's rank.
func (op *recomputeGradOp) Type() hm.Type {
	dims := op.c.fwd.t.dims()
	return opkit.FnType(append(dims, dims[op.k])...)
}

func (op *recomputeGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	t := op.c.fwd.t
	if op.k == 0 {
		return t.x.Shape().Clone(), nil
	}
	return t.params[op.k-1].Shape().Clone(), nil
}

func (op *recomputeGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("%v: got %d inputs, want %d", op, len(vs), op.Arity())
	}
	if err := op.c.compute(vs); err != nil {
		return nil, err
	}
	return op.c.outs[op.k], nil
}

func (op *recomputeGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "nn.recomputegrad(%p,%d)", op.c, op.k)
}
func (op *recomputeGradOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *recomputeGradOp) String() string {
	return fmt.Sprintf("recompute(%s).grad%d", op.c.fwd.name, op.k)
}
func (op *recomputeGradOp) DiffWRT(n int) []bool { return make([]bool, n) }

func (op *recomputeGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: second derivatives through a recomputed block are not implemented; build the stack without recomputation", op)
}

func (op *recomputeGradOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: recomputed blocks need graph.Compile's machine, not the LispMachine", op)
}

// copyInto copies v into *dst, allocating it on first use.
func copyInto(dst **tensor.Dense, v G.Value) (*tensor.Dense, error) {
	src, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("nn.Stack: value is a %T, want a *tensor.Dense", v)
	}
	if *dst == nil || !graph.SameShape((*dst).Shape(), src.Shape()) || (*dst).Dtype() != src.Dtype() {
		*dst = tensor.New(tensor.Of(src.Dtype()), tensor.WithShape(src.Shape().Clone()...))
	}
	if err := tensor.Copy(*dst, src); err != nil {
		return nil, fmt.Errorf("nn.Stack: %w", err)
	}
	return *dst, nil
}
