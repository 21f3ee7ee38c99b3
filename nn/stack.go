package nn

// A stack of identical blocks, with optional activation recomputation
// (gradient checkpointing): instead of keeping every block's intermediate
// values for the backward pass, the outer graph keeps only each block's
// input and output, and the backward pass runs the block forward again.
//
// How: the block is built once more in a graph of its own (the template),
// compiled into two machines, forward-only and forward+backward. Block i is
// one op in the outer graph whose inputs are x_i and block i's parameters;
// its forward binds them to the template and runs the forward machine. Its
// backward is one op with the same inputs and the upstream gradient dy: it
// runs the forward+backward machine with dy as the seed of Σ(y ⊙ dy),
// whose gradient with respect to y is dy exactly, and returns all of the
// block's gradients packed in one vector; one small op per input takes its
// gradient out of it. So the gradients reach their consumers through graph
// edges, and the outer Machine frees the packed vector once they have. All
// blocks share the template's buffers, so memory holds one block's
// intermediates instead of N. The template computes with the same ops in
// the same order as the plain chain, so gradients are bit-identical.

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
	// used says which inputs (x, then the parameters) affect y and get a
	// gradient; offsets locate each one's gradient in the packed vector
	// (offsets[k]…offsets[k+1]).
	used    []bool
	offsets []int
	shapes  []tensor.Shape // of x, then the parameters
	yShape  tensor.Shape
}

func newTemplate(outer *graph.Graph, x *G.Node, names []string, build BlockFunc) (*template, error) {
	g, err := graph.New(outer.Dtype(), outer.Seed())
	if err != nil {
		return nil, err
	}
	t := &template{outer: outer, g: g, names: names}
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
	cost, err := opkit.Apply(&seedOp{dims: t.y.Dims()}, t.y, t.dy)
	if err != nil {
		return nil, fmt.Errorf("nn.Stack: %w", err)
	}
	if t.fwd, err = g.Compile(nil, graph.Keep(t.y)); err != nil {
		return nil, err
	}
	wrt := append([]*G.Node{t.x}, t.params...)
	if t.bwd, err = g.Compile(cost, graph.WithRespectTo(wrt...), graph.AllowNonFinite()); err != nil {
		return nil, fmt.Errorf("nn.Stack block %q: %w", names[0], err)
	}
	t.offsets, t.yShape = []int{0}, t.y.Shape()
	for _, n := range wrt {
		t.shapes = append(t.shapes, n.Shape())
		used := t.bwd.HasGrad(n)
		size := 0
		if used {
			size = n.Shape().TotalSize()
		}
		t.used = append(t.used, used)
		t.offsets = append(t.offsets, t.offsets[len(t.offsets)-1]+size)
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

// seedOp is the template's cost: a scalar whose gradient with respect to
// y is dy (an input), so that the backward machine starts the backward
// pass from the upstream gradient itself, as Σ(y ⊙ dy) would but without
// its broadcast and product (which gorgonia allocates on every run). Its
// value is never read; it is 0.
type seedOp struct {
	opkit.Defaults
	dims int
	out  opkit.ScalarBuffer
}

func (op *seedOp) Arity() int                                     { return 2 }
func (op *seedOp) Type() hm.Type                                  { return opkit.FnType(op.dims, op.dims, 0) }
func (op *seedOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (op *seedOp) WriteHash(h hash.Hash)                          { fmt.Fprintf(h, "nn.seed(%d)", op.dims) }
func (op *seedOp) Hashcode() uint32                               { return opkit.HashOf(op) }
func (op *seedOp) String() string                                 { return "seed" }
func (op *seedOp) DiffWRT(int) []bool                             { return []bool{true, false} }

func (op *seedOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("%v: got %d inputs, want 2", op, len(vs))
	}
	return op.out.Set(vs[0].Dtype(), 0), nil
}

// SymDiff: the cost is the root of the backward machine, so its upstream
// gradient is exactly 1 and the gradient of y is dy.
func (op *seedOp) SymDiff(inputs G.Nodes, _, _ *G.Node) (G.Nodes, error) {
	return G.Nodes{inputs[1], nil}, nil
}

func (op *seedOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: recomputed blocks need graph.Compile's machine, not the LispMachine", op)
}

// recomputeOp is block i: y = block(x, θ_i).
type recomputeOp struct {
	opkit.Defaults
	t     *template
	block int
	name  string
	out   opkit.Buffer
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

func (op *recomputeOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo runs the block and copies its output into prealloc, the
// outer Machine's tensor, or without one into the op's own buffer.
func (op *recomputeOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
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
	y, err := t.fwd.Value(t.y)
	if err != nil {
		return nil, err
	}
	src, ok := y.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%v: the block's output is a %T, want a *tensor.Dense", op, y)
	}
	out, err := op.out.Use(op, prealloc, src.Dtype(), t.yShape)
	if err != nil {
		return nil, err
	}
	return out, copyData(out, src, 0, true)
}

func (op *recomputeOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "nn.recompute(%p,%d)", op.t, op.block)
}
func (op *recomputeOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *recomputeOp) String() string   { return "recompute(" + op.name + ")" }

// DiffWRT: the inputs the block's output depends on (all, in any block
// worth building).
func (op *recomputeOp) DiffWRT(n int) []bool { return append([]bool(nil), op.t.used[:n]...) }

// SymDiff returns the gradient of every input the block uses: one backward
// op computing all of them into a packed vector, and one op per input
// taking its part out.
func (op *recomputeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	args := append(append(G.Nodes(nil), inputs...), grad)
	packed, err := opkit.Apply(&recomputeGradOp{fwd: op}, args...)
	if err != nil {
		return nil, err
	}
	out := make(G.Nodes, len(inputs))
	for k := range inputs {
		if !op.t.used[k] {
			continue
		}
		if out[k], err = opkit.Apply(&unpackOp{fwd: op, k: k}, packed); err != nil {
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

// recomputeGradOp is block i's backward: from (x, θ_i, dy), the gradients
// of every input it uses, packed in one vector in input order.
type recomputeGradOp struct {
	opkit.Defaults
	fwd *recomputeOp
	out opkit.Buffer
}

func (op *recomputeGradOp) Arity() int { return op.fwd.Arity() + 1 }

// Type takes the forward op's inputs and output gradient and returns a
// vector.
func (op *recomputeGradOp) Type() hm.Type {
	return opkit.FnType(append(op.fwd.t.dims(), 1)...)
}

func (op *recomputeGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{max(op.fwd.t.offsets[len(op.fwd.t.offsets)-1], 1)}, nil
}

func (op *recomputeGradOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo runs the block forward and backward and packs its
// gradients into prealloc, the outer Machine's tensor, or without one into
// the op's own buffer.
func (op *recomputeGradOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("%v: got %d inputs, want %d", op, len(vs), op.Arity())
	}
	t, i := op.fwd.t, op.fwd.block
	if err := t.bind(i, vs); err != nil {
		return nil, err
	}
	if err := G.Let(t.dy, vs[len(vs)-1]); err != nil {
		return nil, fmt.Errorf("%v: binding the upstream gradient: %w", op, err)
	}
	if err := t.bwd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	gs, err := t.bwd.Grads()
	if err != nil {
		return nil, err
	}
	size := max(t.offsets[len(t.offsets)-1], 1)
	var shape [1]int
	shape[0] = size
	out, err := op.out.Use(op, prealloc, t.g.Dtype(), shape[:])
	if err != nil {
		return nil, err
	}
	for k, gk := range gs {
		if gk != nil {
			if err := copyData(out, gk, t.offsets[k], true); err != nil {
				return nil, fmt.Errorf("%v: %w", op, err)
			}
		}
	}
	return out, nil
}

func (op *recomputeGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "nn.recomputegrad(%p,%d)", op.fwd.t, op.fwd.block)
}
func (op *recomputeGradOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *recomputeGradOp) String() string   { return fmt.Sprintf("recompute(%s).grad", op.fwd.name) }

// DiffWRT: every input may carry a second derivative, which SymDiff
// reports as not implemented.
func (op *recomputeGradOp) DiffWRT(n int) []bool { return opkit.AllTrue(n) }

func (op *recomputeGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: second derivatives through a recomputed block are not implemented; build the stack without recomputation", op)
}

func (op *recomputeGradOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: recomputed blocks need graph.Compile's machine, not the LispMachine", op)
}

// unpackOp takes the gradient of input k of a block out of its packed
// gradients.
type unpackOp struct {
	opkit.Defaults
	fwd *recomputeOp
	k   int
	out opkit.Buffer
}

func (op *unpackOp) Arity() int { return 1 }

func (op *unpackOp) Type() hm.Type { return opkit.FnType(1, op.fwd.t.dims()[op.k]) }

func (op *unpackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return op.fwd.t.shapes[op.k].Clone(), nil
}

func (op *unpackOp) Do(vs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vs...) }

// UsePreallocDo copies the gradient into prealloc, the outer Machine's
// tensor, or without one into the op's own buffer.
func (op *unpackOp) UsePreallocDo(prealloc G.Value, vs ...G.Value) (G.Value, error) {
	if len(vs) != 1 {
		return nil, fmt.Errorf("%v: got %d inputs, want 1", op, len(vs))
	}
	packed, ok := vs[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%v: input is a %T, want a *tensor.Dense", op, vs[0])
	}
	out, err := op.out.Use(op, prealloc, packed.Dtype(), op.fwd.t.shapes[op.k])
	if err != nil {
		return nil, err
	}
	return out, copyData(out, packed, op.fwd.t.offsets[op.k], false)
}

func (op *unpackOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "nn.unpack(%p,%d,%d)", op.fwd.t, op.fwd.block, op.k)
}
func (op *unpackOp) Hashcode() uint32 { return opkit.HashOf(op) }
func (op *unpackOp) String() string {
	return fmt.Sprintf("recompute(%s).grad%d", op.fwd.name, op.k)
}
func (op *unpackOp) DiffWRT(n int) []bool { return opkit.AllTrue(n) }

func (op *unpackOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: second derivatives through a recomputed block are not implemented; build the stack without recomputation", op)
}

func (op *unpackOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: recomputed blocks need graph.Compile's machine, not the LispMachine", op)
}

// copyData copies src into dst: when into, all of src into dst from
// element off on; otherwise dst's length of src from element off on.
func copyData(dst *tensor.Dense, src G.Value, off int, into bool) error {
	s, ok := src.(*tensor.Dense)
	if !ok || s.Dtype() != dst.Dtype() {
		return fmt.Errorf("nn.Stack: value is a %T of %v, want a %v tensor", src, dtypeOf(src), dst.Dtype())
	}
	switch dst.Dtype() {
	case tensor.Float32:
		return copyFloats(dst.Float32s(), s.Float32s(), off, into)
	case tensor.Float64:
		return copyFloats(dst.Float64s(), s.Float64s(), off, into)
	}
	return fmt.Errorf("nn.Stack: dtype %v, want float32 or float64", dst.Dtype())
}

func copyFloats[T graph.Float](dst, src []T, off int, into bool) error {
	if into {
		if off+len(src) > len(dst) {
			return fmt.Errorf("nn.Stack: %d values do not fit at %d of %d", len(src), off, len(dst))
		}
		copy(dst[off:], src)
		return nil
	}
	if off+len(dst) > len(src) {
		return fmt.Errorf("nn.Stack: %d values from %d of %d", len(dst), off, len(src))
	}
	copy(dst, src[off:off+len(dst)])
	return nil
}

func dtypeOf(v G.Value) any {
	if v == nil {
		return nil
	}
	return v.Dtype()
}
