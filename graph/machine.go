package graph

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Machine runs a compiled graph: bind inputs with Set, call Run, read the
// loss, gradients and kept values.
//
// Gradients are the values of gradient nodes computed by the last Run; they
// never accumulate across runs, so there is nothing to zero between steps
// (unlike gorgonia's BindDualValues, which adds every run's gradient into the
// previous one). Values returned by Value and Grad are the machine's own
// tensors and are overwritten by the next Run; copy them to keep them.
//
// Run executes the ops in the order gorgonia's tape machine would (so the
// results are the same, bit for bit), with an executor of its own (see
// exec.go) that allocates nothing once the first Run has made the buffers,
// as long as the ops themselves do not: the project's ops do not; most of
// gorgonia's write into a buffer the machine keeps, but some allocate
// anyway. The machine owns the buffers of the values (PreallocOp) and
// reuses each once no later op reads its value, so a training step holds
// the activations its backward pass still needs, not every intermediate
// of both passes (BufferBytes).
type Machine struct {
	g         *Graph
	exec      *executor
	loss      *G.Node
	params    []*G.Node
	grads     []*G.Node
	gradVals  []*tensor.Dense           // what Grads returns, refilled by each call
	inputs    []*G.Node                 // inputs the program reads
	shapes    map[*G.Node]tensor.Shape  // their shapes (Node.Shape allocates a copy)
	direct    map[*G.Node]bool          // values readable straight off the node
	copies    map[*G.Node]*G.Value      // values copied during the run (see Keep)
	views     map[*G.Node]*tensor.Dense // contiguous copies of views given to Set
	nonFinite bool
	onGrad    func(i int, g *tensor.Dense) error // OnGradReady's hook
}

// errNotCompiled is returned by the methods of a Machine that Compile did
// not make (nil or the zero value).
var errNotCompiled = errors.New("graph: machine not compiled (use Graph.Compile)")

func (m *Machine) check() error {
	if m == nil || m.exec == nil {
		return errNotCompiled
	}
	return nil
}

// Option configures Compile.
type Option func(*compileConfig)

type compileConfig struct {
	wrt       []*G.Node
	wrtSet    bool
	keep      []*G.Node
	nonFinite bool
}

// WithRespectTo sets the nodes whose gradients Run computes (default: every
// parameter of the graph). Pass no nodes for a forward-only machine.
func WithRespectTo(nodes ...*G.Node) Option {
	return func(c *compileConfig) { c.wrt, c.wrtSet = nodes, true }
}

// Keep makes the values of intermediate nodes readable with Value after Run.
// The machine may reuse an intermediate's memory for a later op (gradient
// sums share buffers), so a kept node that has consumers is copied when it
// is computed.
func Keep(nodes ...*G.Node) Option {
	return func(c *compileConfig) { c.keep = append(c.keep, nodes...) }
}

// AllowNonFinite lets Set accept inputs containing NaN or ±Inf (by default
// they are rejected, naming the input and the position).
func AllowNonFinite() Option { return func(c *compileConfig) { c.nonFinite = true } }

// Compile builds the gradient nodes of loss and compiles the graph into a
// machine. loss must be a scalar node; it may be nil for a machine that only
// evaluates kept nodes. Build the whole graph before compiling: nodes added
// later are not part of the machine.
//
// A parameter that does not affect the loss (a head this loss does not
// use, a frozen branch) gets no gradient: Grads has nil at its position and
// Grad returns nil, as PyTorch leaves such a parameter's .grad None; the
// optimizers skip it. If none of them affects the loss, Compile fails, as
// PyTorch's backward does on a loss that requires no gradient.
func (g *Graph) Compile(loss *G.Node, opts ...Option) (m *Machine, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("graph.Compile: %v", r)
		}
	}()
	if err := g.check(); err != nil {
		return nil, err
	}
	cfg := compileConfig{}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("graph.Compile: option %d is nil", i)
		}
		o(&cfg)
	}
	if !cfg.wrtSet {
		cfg.wrt = g.params
	}
	m = &Machine{g: g, loss: loss, direct: map[*G.Node]bool{}, copies: map[*G.Node]*G.Value{}, views: map[*G.Node]*tensor.Dense{},
		nonFinite: cfg.nonFinite}
	var roots G.Nodes
	reads := map[*G.Node]*G.Value{} // the Read nodes copying kept values
	if loss != nil {
		if err := g.checkCost(loss); err != nil {
			return nil, fmt.Errorf("graph.Compile: %w", err)
		}
		cfg.keep = append(cfg.keep, loss)
		if len(cfg.wrt) > 0 {
			if m.grads, err = g.grad(loss, cfg.wrt, true); err != nil {
				return nil, fmt.Errorf("graph.Compile: %w", err)
			}
			m.params = append([]*G.Node(nil), cfg.wrt...)
			m.gradVals = make([]*tensor.Dense, len(m.params))
			used := 0
			for _, gr := range m.grads {
				if gr != nil {
					cfg.keep = append(cfg.keep, gr)
					used++
				}
			}
			if used == 0 {
				return nil, fmt.Errorf("graph.Compile: none of the %d nodes to differentiate with respect to (%q, ...) affects loss %q through differentiable ops",
					len(cfg.wrt), cfg.wrt[0].Name(), loss.Name())
			}
		}
	}
	if len(cfg.keep) == 0 {
		return nil, fmt.Errorf("graph.Compile: nothing to compute: give a loss or Keep some nodes")
	}
	for _, n := range cfg.keep {
		if n == nil || n.Graph() != g.eg {
			return nil, fmt.Errorf("graph.Compile: kept node %v is not in this graph", n)
		}
		if m.direct[n] || m.copies[n] != nil {
			continue
		}
		if n.Op() == nil || g.eg.To(n.ID()).Len() == 0 {
			m.direct[n] = true // nothing can overwrite it
		} else {
			v := new(G.Value)
			m.copies[n] = v
			r := G.Read(n, v)
			reads[r] = v
			roots = append(roots, r)
		}
		roots = append(roots, n)
	}
	sub := g.eg.SubgraphRoots(roots...)
	m.shapes = map[*G.Node]tensor.Shape{}
	for _, in := range g.inputs {
		if sub.Has(in.ID()) {
			m.inputs = append(m.inputs, in)
		}
		m.shapes[in] = in.Shape()
	}
	if m.exec, err = newExecutor(sub, g.sums, reads, m.direct); err != nil {
		return nil, fmt.Errorf("graph.Compile: %w", err)
	}
	if err := m.planReady(); err != nil {
		return nil, fmt.Errorf("graph.Compile: %w", err)
	}
	return m, nil
}

// planReady finds, for each parameter with a gradient, the step after
// which the value Grads returns for it is final: the step computing the
// gradient node (for a parameter used several times, the sum Grad made of
// its terms), or the step copying it for Keep when it has consumers.
func (m *Machine) planReady() error {
	e := m.exec
	copyStep := map[*G.Value]int{}
	for i, s := range e.steps {
		if s.kind == stepCopy {
			copyStep[s.into] = i
		}
	}
	for i, gr := range m.grads {
		if gr == nil {
			continue
		}
		at, ok := e.slot[gr]
		if into, copied := m.copies[gr]; copied {
			at, ok = copyStep[into]
		}
		if !ok {
			return fmt.Errorf("the gradient of %q is not computed by the machine", m.params[i].Name())
		}
		e.ready = append(e.ready, gradReady{step: at, param: i})
	}
	slices.SortStableFunc(e.ready, func(a, b gradReady) int { return cmp.Compare(a.step, b.step) })
	return nil
}

// OnGradReady makes every training Run (see Run) call f once for each
// parameter with a gradient, as soon as that gradient is final: right
// after the last op that writes it (for a parameter used several times,
// tied weights say, the sum of its terms), while the ops of earlier
// layers are still to run. i is the parameter's index in Params and g the
// tensor Grads returns at i; f must not change it. The calls come on
// Run's goroutine, in the order the gradients become final (the backward
// pass produces the last layers' first), so that data-parallel training
// can start averaging them across processes before the pass ends. An
// error from f ends Run with that error. Evaluation Runs call nothing; f
// nil removes the hook. Setting a hook changes no result, and Run still
// allocates nothing.
func (m *Machine) OnGradReady(f func(i int, g *tensor.Dense) error) {
	if m == nil || m.exec == nil {
		return
	}
	m.onGrad = f
	if f == nil {
		m.exec.notify = nil
		return
	}
	m.exec.notify = m.gradReady
}

// gradReady passes parameter i's final gradient to the hook.
func (m *Machine) gradReady(i int) error {
	if !m.g.training || m.onGrad == nil {
		return nil
	}
	g, err := m.gradAt(i)
	if err != nil {
		return err
	}
	if err := m.onGrad(i, g); err != nil {
		return fmt.Errorf("gradient of %q ready: %w", m.params[i].Name(), err)
	}
	return nil
}

// Set binds v to the input node n for the next runs. It must match n's
// dtype and shape, and contain no NaN or ±Inf unless the machine was
// compiled with AllowNonFinite.
//
// A contiguous v is used in place, not copied: later writes to it reach the
// next Run. A view (after T or Slice), whose memory is not in its logical
// row-major order, is copied in that order into a buffer the machine owns
// for n, because ops read the bound memory directly; Set it again after
// changing it. Masked tensors are refused.
func (m *Machine) Set(n *G.Node, v *tensor.Dense) (err error) {
	if err := m.check(); err != nil {
		return err
	}
	if n == nil || v == nil {
		return fmt.Errorf("graph: Set: nil node or value")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: Set %q: %v", n.Name(), r)
		}
	}()
	if !m.isInput(n) {
		return fmt.Errorf("graph: Set %q: not an input of this machine (parameters are updated in place through Value)", n.Name())
	}
	if v.Dtype() != n.Dtype() || !SameShape(v.Shape(), m.shapes[n]) {
		return fmt.Errorf("graph: Set %q: got %v%v, want %v%v", n.Name(), v.Dtype(), v.Shape(), n.Dtype(), n.Shape())
	}
	if v.IsMasked() {
		return fmt.Errorf("graph: Set %q: a masked tensor, want an unmasked one (gorgonia ops ignore masks)", n.Name())
	}
	if v.IsView() || v.IsMaterializable() || v.RequiresIterator() {
		if v, err = m.contiguous(n, v); err != nil {
			return fmt.Errorf("graph: Set %q: copying a view: %w", n.Name(), err)
		}
	}
	if !m.nonFinite {
		if i, x, bad := firstNonFinite(v); bad {
			return fmt.Errorf("graph: Set %q: element %d is %v (compile with AllowNonFinite to accept it)", n.Name(), i, x)
		}
	}
	if cur, ok := n.Value().(*tensor.Dense); ok && cur == v {
		return nil // bound already, and read in place; G.Let would allocate
	}
	return G.Let(n, v)
}

// contiguous copies the view v, in its logical order, into the buffer kept
// for input n.
func (m *Machine) contiguous(n *G.Node, v *tensor.Dense) (*tensor.Dense, error) {
	buf := m.inputBuffer(n)
	if err := tensor.Copy(buf, v); err != nil {
		return nil, err
	}
	return buf, nil
}

// inputBuffer returns the buffer the machine keeps for input n (views
// copied by Set, ids written by SetIDs), made on first use.
func (m *Machine) inputBuffer(n *G.Node) *tensor.Dense {
	buf := m.views[n]
	if buf == nil {
		buf = tensor.New(tensor.Of(n.Dtype()), tensor.WithShape(n.Shape()...))
		m.views[n] = buf
	}
	return buf
}

// SetIDs binds integer ids (token ids, class labels; row-major, one per
// element of n) to the input node n for the next runs. n may be float32 or
// float64: the ids are converted once, here, into a buffer the machine
// owns, and each must be exactly representable in n's dtype (|id| < 2²⁴
// in float32, 2⁵³ in float64). Whether an id is in range (a vocabulary, a
// class count, an ignore_index) is checked by the op that reads it. Unlike
// Set, later changes to ids do not reach the machine: call SetIDs again.
func (m *Machine) SetIDs(n *G.Node, ids []int) error {
	if err := m.check(); err != nil {
		return err
	}
	if n == nil {
		return fmt.Errorf("graph: SetIDs: nil node")
	}
	if !m.isInput(n) {
		return fmt.Errorf("graph: SetIDs %q: not an input of this machine", n.Name())
	}
	shape := m.shapes[n]
	if size := shape.TotalSize(); len(ids) != size {
		return fmt.Errorf("graph: SetIDs %q: got %d ids, want %d (one per element of shape %v)", n.Name(), len(ids), size, shape)
	}
	limit := int64(1) << 53
	if n.Dtype() == tensor.Float32 {
		limit = 1 << 24
	}
	for i, id := range ids {
		if int64(id) >= limit || int64(id) <= -limit {
			return fmt.Errorf("graph: SetIDs %q: id %d at position %d is not exactly representable in %v (|id| must be below %d)", n.Name(), id, i, n.Dtype(), limit)
		}
	}
	buf := m.inputBuffer(n)
	switch n.Dtype() {
	case tensor.Float32:
		d := buf.Float32s()
		for i, id := range ids {
			d[i] = float32(id)
		}
	case tensor.Float64:
		d := buf.Float64s()
		for i, id := range ids {
			d[i] = float64(id)
		}
	default:
		return fmt.Errorf("graph: SetIDs %q: dtype %v, want float32 or float64", n.Name(), n.Dtype())
	}
	if cur, ok := n.Value().(*tensor.Dense); ok && cur == buf {
		return nil // bound already; G.Let would allocate
	}
	return letValue(n, buf)
}

// letValue is G.Let with its panics turned into errors.
func letValue(n *G.Node, v *tensor.Dense) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: binding %q: %v", n.Name(), r)
		}
	}()
	return G.Let(n, v)
}

func (m *Machine) isInput(n *G.Node) bool {
	for _, in := range m.g.inputs {
		if in == n {
			return true
		}
	}
	return false
}

// Run computes the loss, the gradients and the kept values.
//
// In training mode (Graph.SetTraining(true), the default) a Run draws its
// randomness (dropout masks) for the graph's step and then advances the
// step by one, so that every training Run of a loop gets fresh masks, as
// PyTorch's generator advances with every draw; a Run that fails leaves
// the step where it was. An evaluation Run neither reads a fresh step nor
// advances it. Graph.SetStep sets the step of the next Run (a resumed
// run, or a trainer that counts its own steps).
func (m *Machine) Run() (err error) {
	if err := m.check(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			s := m.exec.steps[m.exec.pc]
			err = fmt.Errorf("graph: Run: node %q (op %v): %v", s.node.Name(), s.op, r)
		}
	}()
	for _, in := range m.inputs {
		if in.Value() == nil {
			return fmt.Errorf("graph: Run: input %q %v has no value; call Machine.Set first", in.Name(), in.Shape())
		}
	}
	training := m.g.training
	if err := m.exec.run(); err != nil {
		return fmt.Errorf("graph: Run: %w", err)
	}
	if training {
		m.g.step++
	}
	return nil
}

// Loss returns the loss computed by the last Run.
func (m *Machine) Loss() (float64, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	if m.loss == nil {
		return 0, fmt.Errorf("graph: machine was compiled without a loss")
	}
	v, err := m.Value(m.loss)
	if err != nil {
		return 0, err
	}
	return scalarOf(m.loss, v)
}

// Value returns the value of a parameter, an input or a kept node.
func (m *Machine) Value(n *G.Node) (G.Value, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("graph: Value of a nil node")
	}
	if p, ok := m.copies[n]; ok {
		if *p == nil {
			return nil, fmt.Errorf("graph: %q has no value yet; call Run first", n.Name())
		}
		return *p, nil
	}
	if !m.direct[n] && n.Op() != nil {
		return nil, fmt.Errorf("graph: %q is neither a parameter, an input nor kept; pass it to graph.Keep when compiling", n.Name())
	}
	v := n.Value()
	if n.Op() != nil {
		v = m.exec.value(n)
	}
	if v == nil {
		return nil, fmt.Errorf("graph: %q has no value yet; call Run first", n.Name())
	}
	return v, nil
}

// Params returns the nodes whose gradients Run computes, in order.
func (m *Machine) Params() []*G.Node {
	if m == nil {
		return nil
	}
	return append([]*G.Node(nil), m.params...)
}

// Grad returns the gradient of the loss with respect to p (one of Params):
// nil, and no error, when p does not affect the loss.
func (m *Machine) Grad(p *G.Node) (*tensor.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("graph: Grad of a nil node")
	}
	for i, q := range m.params {
		if q == p {
			return m.gradAt(i)
		}
	}
	return nil, fmt.Errorf("graph: no gradient for %q: not among the machine's parameters", p.Name())
}

// HasGrad reports whether Run computes a gradient for p: p is one of Params
// and affects the loss. Grad returns nil for the others. Unlike reading
// Grad, it can be asked before the first Run.
func (m *Machine) HasGrad(p *G.Node) bool {
	if m == nil || p == nil {
		return false
	}
	for i, q := range m.params {
		if q == p {
			return m.grads[i] != nil
		}
	}
	return false
}

// Grads returns the gradients of all Params, in order, nil for a parameter
// that does not affect the loss. The slice, like the tensors in it, is the
// machine's own: the next call refills it.
func (m *Machine) Grads() ([]*tensor.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	out := m.gradVals
	for i := range m.params {
		var err error
		if out[i], err = m.gradAt(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m *Machine) gradAt(i int) (*tensor.Dense, error) {
	if m.grads[i] == nil {
		return nil, nil // an unused parameter
	}
	v, err := m.Value(m.grads[i])
	if err != nil {
		return nil, fmt.Errorf("graph: gradient of %q: %w", m.params[i].Name(), err)
	}
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("graph: gradient of %q is a %T, want a tensor", m.params[i].Name(), v)
	}
	return d, nil
}

// ErrNonFinite is wrapped by CheckFinite's errors.
var ErrNonFinite = errors.New("non-finite value")

// CheckFinite reports the first NaN or ±Inf in the loss or a gradient,
// naming the tensor and the position.
func (m *Machine) CheckFinite() error {
	if err := m.check(); err != nil {
		return err
	}
	if m.loss != nil {
		l, err := m.Loss()
		if err != nil {
			return err
		}
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return fmt.Errorf("graph: loss %q is %v: %w", m.loss.Name(), l, ErrNonFinite)
		}
	}
	for i, p := range m.params {
		d, err := m.gradAt(i)
		if err != nil {
			return err
		}
		if d == nil {
			continue
		}
		if j, x, bad := firstNonFinite(d); bad {
			return fmt.Errorf("graph: gradient of %q %v has %v at element %d: %w", p.Name(), d.Shape(), x, j, ErrNonFinite)
		}
	}
	return nil
}

// BufferBytes returns the bytes of the buffers the machine holds for the
// values of a Run, and the bytes of the values written into them: without
// reuse the two would be equal, and their difference is what reusing a
// dead value's buffer saves. Both are 0 before the first Run. Values an op
// keeps in memory of its own (ops without PreallocOp) are not counted.
func (m *Machine) BufferBytes() (held, values int) {
	if m.check() != nil {
		return 0, 0
	}
	seen := map[G.Value]bool{}
	for _, s := range m.exec.steps {
		if s.buf == nil {
			continue
		}
		n := s.buf.MemSize()
		values += int(n)
		if !seen[s.buf] {
			seen[s.buf] = true
			held += int(n)
		}
	}
	return held, values
}

// Close releases the machine's buffers. A Run after Close makes them
// again.
func (m *Machine) Close() error {
	if err := m.check(); err != nil {
		return err
	}
	m.exec.release()
	return nil
}

func firstNonFinite(t *tensor.Dense) (int, float64, bool) {
	switch t.Dtype() { // not t.Data(), whose boxing allocates
	case tensor.Float32:
		for i, x := range t.Float32s() {
			if x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
				return i, float64(x), true
			}
		}
	case tensor.Float64:
		for i, x := range t.Float64s() {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return i, x, true
			}
		}
	}
	return 0, 0, false
}

func scalarOf(n *G.Node, v G.Value) (float64, error) {
	x, err := Scalar(v)
	if err != nil {
		return 0, fmt.Errorf("graph: %q: %w", n.Name(), err)
	}
	return x, nil
}

// Float64s returns a copy of the elements of a float32 or float64 tensor
// as float64, nil for a nil tensor or another dtype: the form in which
// results of either dtype are compared with float64 references.
func Float64s(t *tensor.Dense) []float64 {
	if t == nil {
		return nil
	}
	switch d := t.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case float64: // a scalar-shaped tensor
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	return nil
}

// FromFloat64s returns a new tensor of dtype (float32 or float64) and
// shape holding a copy of vals in row-major order, each rounded once for
// float32: the inverse of Float64s, for inputs, targets and references
// written as float64 numbers and wanted in either dtype.
func FromFloat64s(dtype tensor.Dtype, vals []float64, shape ...int) (*tensor.Dense, error) {
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, fmt.Errorf("graph.FromFloat64s: dtype %v, want float32 or float64", dtype)
	}
	n, err := elements(shape)
	if err != nil {
		return nil, fmt.Errorf("graph.FromFloat64s: %w", err)
	}
	if n != len(vals) {
		return nil, fmt.Errorf("graph.FromFloat64s: shape %v has %d elements, got %d values", shape, n, len(vals))
	}
	t := tensor.New(tensor.Of(dtype), tensor.WithShape(shape...))
	return t, setFloat64s(t, vals) // a new tensor: no parameter changed
}

// SetFloat64s overwrites the elements of a float32 or float64 tensor, in
// row-major order, with vals, each rounded once for float32: the values of
// a parameter or gradient set in place. The tensor must not be a view and
// must have len(vals) elements. It marks parameters changed
// (MarkParamsChanged).
func SetFloat64s(t *tensor.Dense, vals []float64) error {
	if err := setFloat64s(t, vals); err != nil {
		return err
	}
	MarkParamsChanged() // t may be a parameter
	return nil
}

func setFloat64s(t *tensor.Dense, vals []float64) error {
	if t == nil {
		return fmt.Errorf("graph.SetFloat64s: nil tensor")
	}
	if t.IsView() || t.Shape().IsScalar() {
		return fmt.Errorf("graph.SetFloat64s: tensor of shape %v is a view or a scalar, want a plain tensor", t.Shape())
	}
	if n := t.Shape().TotalSize(); n != len(vals) {
		return fmt.Errorf("graph.SetFloat64s: tensor of shape %v has %d elements, got %d values", t.Shape(), n, len(vals))
	}
	switch d := t.Data().(type) {
	case []float32:
		for i, v := range vals {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, vals)
	default:
		return fmt.Errorf("graph.SetFloat64s: tensor of dtype %v, want float32 or float64", t.Dtype())
	}
	return nil
}

// Scalar reads a float32 or float64 scalar Value (or a one-element tensor)
// as a float64.
func Scalar(v G.Value) (float64, error) {
	switch x := v.(type) {
	case *G.F64:
		if x != nil {
			return float64(*x), nil
		}
	case *G.F32:
		if x != nil {
			return float64(*x), nil
		}
	case *tensor.Dense:
		if x != nil && x.Shape().TotalSize() == 1 {
			switch d := x.Data().(type) {
			case []float64:
				return d[0], nil
			case []float32:
				return float64(d[0]), nil
			case float64:
				return d, nil
			case float32:
				return float64(d), nil
			}
		}
	}
	return 0, fmt.Errorf("value is a %T, want a float scalar", v)
}
