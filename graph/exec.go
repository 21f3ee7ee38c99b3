package graph

// The Machine's executor: it runs a compiled subgraph op by op, in the order
// gorgonia's tape machine used (so every float result is the same), without
// the tape machine's per-instruction allocations (its input slices, logging
// arguments and the fresh tensor each gorgonia op returns).
//
// At Compile every node gets a slot for its value and every op node a
// reusable input slice. At Run inputs and parameters are read from their
// nodes, and each op writes its value into its slot:
//   - an op that lets the machine own its result (PreallocOp: the
//     project's ops, ops/fused and ops/activation, through opkit) writes
//     it into a buffer the machine gives it (UsePreallocDo);
//   - a gradient sum made by Grad (a + b of two tensors of one shape) is
//     added here into a buffer the machine owns (gorgonia's Add allocates
//     even when given one);
//   - gorgonia's elementwise binary ops and matrix products write into a
//     buffer the machine gives them (UsePreallocDo), or, when they
//     refuse it, allocate their result (Do);
//   - any other op runs its Do and owns its result.
//
// The machine's buffers are planned during the first run that completes,
// as gorgonia's register allocation did, but for every value, not only the
// sums: a value's buffer goes back to a free list after the last op that
// reads it (or reads a view of it), and a later value of the same dtype
// and shape takes it. So a training step holds the activations the
// backward pass still needs and little else, as PyTorch frees a saved
// tensor once the backward op that reads it has run. Values read after Run
// (the loss, gradients, kept nodes) keep their buffers.
//
// Forward state that a backward op reads (layer norm statistics, attention
// probabilities, dropout masks) is a node of its own that the backward op
// takes as an input, so the order of the ops and the lifetime of the state
// both follow from the graph's edges.
//
// Values are not bound to the nodes (the tape machine did that): Machine.
// Value reads them from the slots. Gorgonia's common-subexpression
// elimination at compile time is not repeated: the graph already merges
// equal nodes when they are added, and what remains merged is only
// distinct nodes whose 32-bit hashes collide, which the tape machine
// would wrongly compute once.

import (
	"fmt"
	"reflect"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type stepKind uint8

const (
	stepLoad     stepKind = iota // an input or parameter: its bound value
	stepDo                       // op.Do
	stepPlaced                   // a PreallocOp: UsePreallocDo into buf
	stepPrealloc                 // a gorgonia op: UsePreallocDo into buf, or Do if it refuses
	stepSum                      // a gradient sum of Grad: in[0] + in[1] into buf
	stepCopy                     // a Keep copy: the value of args[0] into *into
)

// PreallocOp is an op whose result a Machine places: gorgonia's
// UsePreallocDoer, whose UsePreallocDo writes the op's whole result into
// the tensor it is given (of the node's dtype and shape, sharing no memory
// with the inputs) and returns it, and says so with WritesPrealloc. The
// machine then plans that tensor's memory with every other value's and
// reuses it once the value is dead. Not every gorgonia op qualifies (the
// gradient of Slice adds into its buffer), hence the explicit promise;
// opkit.Defaults makes it for the ops built on opkit. An op called outside
// a Machine (Do, or UsePreallocDo with nil) keeps a buffer of its own.
type PreallocOp interface {
	G.UsePreallocDoer
	WritesPrealloc() bool
}

type step struct {
	kind stepKind
	node *G.Node
	op   G.Op
	args []int     // slots of the op's inputs, in the op's order
	in   []G.Value // the inputs of this run, reused
	buf  G.Value   // stepPlaced, stepPrealloc, stepSum: the buffer written into
	into *G.Value  // stepCopy: where the kept value is copied
	out  int       // this node's slot
}

type executor struct {
	steps []step
	vals  []G.Value       // the value of each slot in the current run
	slot  map[*G.Node]int // node → slot
	pc    int             // the step running, to name a node that panics

	// The machine's buffers (see assign), planned during the first run
	// that completes.
	last    []int // the last step reading each value; forever if read after Run
	planned bool
	parent  []int // union-find of values sharing memory (views)
	end     []int // per set: the last step reading any member
	free    []*tensor.Dense
	busy    []int // steps holding a buffer

	// Machine.OnGradReady: ready lists, in step order, the step after
	// which each parameter's gradient is final and the parameter's index;
	// notify, when set, is called with the index right after that step.
	ready  []gradReady
	notify func(param int) error

	// Machine.Profile: per step, the time its runs took and how many
	// there were (nil before the first Profile(true)); recorded while
	// profiling.
	spent     []time.Duration
	calls     []int
	profiling bool
}

const forever = int(^uint(0) >> 1)

// gradReady is a parameter whose gradient is final after a step.
type gradReady struct{ step, param int }

// newExecutor orders the nodes of sub as gorgonia's Compile does (G.Sort,
// reversed: children before their consumers). sums are the gradient sums
// made by Grad; copies the Keep copies (Read nodes) of this machine with
// their destinations. Read nodes of other machines on nodes of sub, which
// gorgonia's subgraph pulls in, are left out: a machine updates only its own
// kept values. pinned are the nodes whose values Machine.Value reads after
// Run, which no other value may overwrite.
func newExecutor(sub *G.ExprGraph, sums map[*G.Node]bool, copies map[*G.Node]*G.Value, pinned map[*G.Node]bool) (*executor, error) {
	sorted, err := G.Sort(sub)
	if err != nil {
		return nil, fmt.Errorf("sorting the graph: %w", err)
	}
	order := make([]*G.Node, len(sorted))
	for i, n := range sorted {
		order[len(sorted)-1-i] = n
	}
	order = hoist(sub, order, func(n *G.Node) bool {
		return sums[n] || copies[n] != nil
	})
	e := &executor{slot: make(map[*G.Node]int, len(sorted))}
	for _, n := range order {
		s := step{node: n, op: n.Op()}
		children := childrenOf(sub, n)
		for _, c := range children {
			j, ok := e.slot[c]
			if !ok {
				return nil, fmt.Errorf("node %q reads %q, which is not computed before it", n.Name(), c.Name())
			}
			s.args = append(s.args, j)
		}
		s.in = make([]G.Value, len(s.args))
		switch {
		case s.op == nil:
			s.kind = stepLoad
		case isStatement(s.op):
			into, ok := copies[n]
			if !ok {
				if typeName(s.op) == "gorgonia.readOp" {
					continue // another machine's Keep copy
				}
				return nil, fmt.Errorf("node %q: op %v (%T) is a statement the machine cannot run", n.Name(), s.op, s.op)
			}
			s.kind, s.into = stepCopy, into
		case sums[n] && isTensorSum(n, children):
			s.kind = stepSum
		case isPlaced(n):
			s.kind = stepPlaced
		case isGorgoniaPrealloc(n):
			s.kind = stepPrealloc
		default:
			s.kind = stepDo
		}
		e.slot[n] = len(e.steps)
		s.out = len(e.steps)
		e.steps = append(e.steps, s)
	}
	e.vals = make([]G.Value, len(e.steps))
	e.last = make([]int, len(e.steps))
	for i, s := range e.steps {
		e.last[i] = i
		for _, j := range s.args {
			e.last[j] = i
		}
	}
	for i, s := range e.steps {
		if pinned[s.node] {
			e.last[i] = forever
		}
	}
	e.parent, e.end = make([]int, len(e.steps)), make([]int, len(e.steps))
	return e, nil
}

// hoist moves each movable node of order (children before consumers) to
// right after the last of its children, keeping the others' order. The
// movable nodes are the gradient sums Grad makes and this machine's Keep
// copies: cheap and pure, so that running them early changes no value,
// while it makes a parameter's gradient final as soon as its last term is
// computed (OnGradReady), not wherever the sort happened to put the sum,
// and frees the terms' memory sooner.
func hoist(sub *G.ExprGraph, order []*G.Node, movable func(*G.Node) bool) []*G.Node {
	waiting := map[*G.Node]int{}         // movable node → children not yet placed
	consumers := map[*G.Node][]*G.Node{} // node → its movable consumers
	for _, n := range order {
		if n.Op() == nil || !movable(n) {
			continue
		}
		for _, c := range childrenOf(sub, n) {
			waiting[n]++
			consumers[c] = append(consumers[c], n)
		}
	}
	out := make([]*G.Node, 0, len(order))
	var place func(n *G.Node)
	place = func(n *G.Node) {
		out = append(out, n)
		for _, m := range consumers[n] {
			if waiting[m]--; waiting[m] == 0 {
				place(m)
			}
		}
	}
	for _, n := range order {
		if _, ok := waiting[n]; ok {
			continue // placed after its last child, which comes before it
		}
		place(n)
	}
	if len(out) != len(order) {
		// A movable node whose children never all came: keep the sort's order.
		return order
	}
	return out
}

func typeName(op G.Op) string { return reflect.TypeOf(op).String() }

// isStatement reports gorgonia's statement ops (Read, Set and device
// transfers), which compute no value of their own.
func isStatement(op G.Op) bool {
	switch typeName(op) {
	case "gorgonia.readOp", "gorgonia.letOp", "gorgonia.devTrans":
		return true
	}
	return false
}

// isTensorSum reports a sum Grad made whose two terms are float tensors of
// the sum's own dtype and shape, the case stepSum adds itself.
func isTensorSum(n *G.Node, children G.Nodes) bool {
	if len(children) != 2 || n.IsScalar() {
		return false
	}
	if dt := n.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return false
	}
	for _, c := range children {
		if c.IsScalar() || c.Dtype() != n.Dtype() || !SameShape(c.Shape(), n.Shape()) {
			return false
		}
	}
	return true
}

// isPlaced reports a tensor-valued PreallocOp.
func isPlaced(n *G.Node) bool {
	op, ok := n.Op().(PreallocOp)
	return ok && op.WritesPrealloc() && !n.IsScalar()
}

// isGorgoniaPrealloc reports a tensor-valued gorgonia op that overwrites a
// given buffer with its result: the elementwise binary ops and the matrix
// products. Other gorgonia ops with UsePreallocDo are not all like that
// (the gradient of Slice adds into the buffer, expecting it to hold its
// first input), so they run their Do.
func isGorgoniaPrealloc(n *G.Node) bool {
	if _, ok := n.Op().(G.UsePreallocDoer); !ok || n.IsScalar() {
		return false
	}
	switch typeName(n.Op()) {
	case "gorgonia.elemBinOp", "gorgonia.linAlgBinOp":
		return true
	}
	return false
}

// run executes every step. A panic is left to the caller, which names the
// node of e.steps[e.pc].
func (e *executor) run() error {
	planning := !e.planned
	if planning {
		for i := range e.steps {
			e.parent[i], e.end[i] = i, e.last[i]
		}
		e.free, e.busy = e.free[:0], e.busy[:0]
	}
	next := 0 // the next entry of e.ready
	for e.pc = range e.steps {
		s := &e.steps[e.pc]
		if s.kind == stepLoad {
			v := s.node.Value()
			if v == nil {
				return fmt.Errorf("%q %v has no value", s.node.Name(), s.node.Shape())
			}
			e.vals[s.out] = v
			if err := e.notifyReady(&next); err != nil {
				return err
			}
			continue
		}
		for i, j := range s.args {
			s.in[i] = e.vals[j]
		}
		if planning && (s.kind == stepSum || s.kind == stepPlaced || s.kind == stepPrealloc) {
			e.assign(e.pc)
		}
		var t0 time.Time
		if e.profiling {
			t0 = time.Now()
		}
		v, err := s.exec()
		if e.profiling {
			e.spent[e.pc] += time.Since(t0)
			e.calls[e.pc]++
		}
		if err != nil {
			return fmt.Errorf("node %q (op %v): %w", s.node.Name(), s.op, err)
		}
		if v == nil && s.kind != stepCopy {
			return fmt.Errorf("node %q (op %v): the op returned no value", s.node.Name(), s.op)
		}
		e.vals[s.out] = v
		if planning && s.kind != stepSum && s.kind != stepCopy && v != s.buf {
			for _, j := range s.args {
				if !ownsMemory(v, e.vals[j:j+1]) {
					e.union(e.pc, j) // a view of its input, or memory unknown
				}
			}
		}
		if err := e.notifyReady(&next); err != nil {
			return err
		}
	}
	if planning {
		e.planned = true
		e.free, e.busy = nil, nil
	}
	return nil
}

// notifyReady calls notify for the gradients final after step e.pc,
// advancing *next past them.
func (e *executor) notifyReady(next *int) error {
	for ; *next < len(e.ready) && e.ready[*next].step == e.pc; *next++ {
		if e.notify != nil {
			if err := e.notify(e.ready[*next].param); err != nil {
				return err
			}
		}
	}
	return nil
}

// assign gives step i a buffer of its node's dtype and shape, reusing one
// of an earlier step whose value nobody reads any more; without it the
// machine would hold every intermediate of the forward and the backward
// pass at once. A value and the views of it (found while planning: outputs
// sharing memory with an input) live until the last read of any of them.
// At step i every view of a value read last before i exists already, since
// views are made by its readers.
func (e *executor) assign(i int) {
	kept := e.busy[:0]
	for _, j := range e.busy {
		if e.end[e.find(j)] < i {
			e.free = append(e.free, e.steps[j].buf.(*tensor.Dense))
		} else {
			kept = append(kept, j)
		}
	}
	e.busy = kept
	s := &e.steps[i]
	s.buf = nil
	for k, b := range e.free {
		if b.Dtype() == s.node.Dtype() && SameShape(b.Shape(), s.node.Shape()) {
			s.buf = b
			e.free = append(e.free[:k], e.free[k+1:]...)
			break
		}
	}
	if s.buf == nil {
		s.buf = tensor.New(tensor.Of(s.node.Dtype()), tensor.WithShape(s.node.Shape()...))
	}
	e.busy = append(e.busy, i)
}

func (e *executor) find(i int) int {
	for e.parent[i] != i {
		e.parent[i] = e.parent[e.parent[i]]
		i = e.parent[i]
	}
	return i
}

func (e *executor) union(i, j int) {
	a, b := e.find(i), e.find(j)
	if a != b {
		e.parent[a] = b
		e.end[b] = max(e.end[a], e.end[b])
	}
}

func (s *step) exec() (G.Value, error) {
	switch s.kind {
	case stepSum:
		return s.sum()
	case stepCopy:
		return nil, s.copyInto()
	case stepPlaced:
		return s.op.(G.UsePreallocDoer).UsePreallocDo(s.buf, s.in...)
	case stepPrealloc:
		// As gorgonia's tape machine: on failure, fall back to Do.
		if v, err := s.op.(G.UsePreallocDoer).UsePreallocDo(s.buf, s.in...); err == nil {
			return v, nil
		}
	}
	return s.op.Do(s.in...)
}

// sum adds the two terms into the step's buffer, element by element in
// IEEE arithmetic, as gorgonia's Add does.
func (s *step) sum() (G.Value, error) {
	a, okA := s.in[0].(*tensor.Dense)
	b, okB := s.in[1].(*tensor.Dense)
	if !okA || !okB {
		return nil, fmt.Errorf("terms are %T and %T, want tensors", s.in[0], s.in[1])
	}
	if s.buf == nil {
		s.buf = tensor.New(tensor.Of(s.node.Dtype()), tensor.WithShape(s.node.Shape()...))
	}
	out := s.buf.(*tensor.Dense)
	n := out.Shape().TotalSize()
	if a.Shape().TotalSize() != n || b.Shape().TotalSize() != n || a.Dtype() != out.Dtype() || b.Dtype() != out.Dtype() {
		return nil, fmt.Errorf("terms %v%v and %v%v, want %v%v", a.Dtype(), a.Shape(), b.Dtype(), b.Shape(), out.Dtype(), out.Shape())
	}
	// Float32s and Float64s, not Data, which allocates an interface.
	if out.Dtype() == tensor.Float32 {
		addTo(out.Float32s(), a.Float32s(), b.Float32s())
	} else {
		addTo(out.Float64s(), a.Float64s(), b.Float64s())
	}
	return out, nil
}

func addTo[T float32 | float64](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// copyInto copies the kept value into *into, allocating it on the first run
// (gorgonia's Read instruction).
func (s *step) copyInto() error {
	v := s.in[0]
	if *s.into == nil {
		c, err := G.CloneValue(v)
		if err != nil {
			return err
		}
		*s.into = c
		return nil
	}
	if d, ok := (*s.into).(*tensor.Dense); ok {
		if src, ok := v.(*tensor.Dense); ok && d.Dtype() == src.Dtype() && SameShape(d.Shape(), src.Shape()) &&
			!src.IsView() && !d.IsView() {
			switch d.Dtype() {
			case tensor.Float32:
				copy(d.Float32s(), src.Float32s())
				return nil
			case tensor.Float64:
				copy(d.Float64s(), src.Float64s())
				return nil
			}
		}
	}
	_, err := G.Copy(*s.into, v)
	return err
}

// ownsMemory reports whether v is a plain tensor that shares no memory
// with the inputs, so that it can be written into on later runs.
func ownsMemory(v G.Value, in []G.Value) bool {
	d, ok := v.(*tensor.Dense)
	if !ok || d.IsView() || d.IsMaterializable() || d.Shape().TotalSize() == 0 {
		return false
	}
	lo, hi := d.Uintptr(), d.Uintptr()+uintptr(d.MemSize())
	for _, x := range in {
		t, ok := x.(*tensor.Dense)
		if !ok || t.Shape().TotalSize() == 0 {
			continue
		}
		a, b := t.Uintptr(), t.Uintptr()+uintptr(t.MemSize())
		if a < hi && lo < b {
			return false
		}
	}
	return true
}

// value returns n's value in the last run, nil if n is not computed here.
func (e *executor) value(n *G.Node) G.Value {
	if j, ok := e.slot[n]; ok {
		return e.vals[j]
	}
	return nil
}

// release drops the values and buffers; the next run makes them again.
func (e *executor) release() {
	clear(e.vals)
	e.planned = false
	for i := range e.steps {
		e.steps[i].buf = nil
		clear(e.steps[i].in)
	}
}
