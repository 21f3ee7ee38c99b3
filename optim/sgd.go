package optim

// Stochastic gradient descent with momentum, dampening, Nesterov and L2
// weight decay, step for step as torch.optim.SGD.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// SGD is torch.optim.SGD. The zero value of every field is PyTorch's
// default, and LearningRate's zero is a learning rate of 0 (PyTorch has no
// default there), so a literal is enough:
//
//	opt := &optim.SGD{LearningRate: 0.1, Momentum: 0.9}
//
// With momentum μ ≠ 0 each parameter keeps a buffer b; one step is
//
//	d = g + λ·p
//	b = d                        (first step: PyTorch does not damp it)
//	b = μ·b + (1 − dampening)·d  (later steps)
//	d = d + μ·b if Nesterov, else d = b
//	p = p − lr·d
//
// Dampening = 0 is heavy-ball momentum; Dampening = μ makes b an
// exponential moving average of d (see the package documentation).
//
// The fields apply to every parameter, or are the defaults of Groups (see
// Group). Hyperparameters may be changed between steps; Step validates them
// every time. State is allocated on the first Step that has a gradient for
// a parameter. Do not copy an SGD after its first Step (copies share
// state).
type SGD struct {
	LearningRate float64 // lr; the field cannot be called LR, which is the Optimizer method
	Momentum     float64 // μ ≥ 0
	Dampening    float64
	WeightDecay  float64 // λ ≥ 0: L2 penalty added to the gradient
	Nesterov     bool    // requires Momentum > 0 and Dampening = 0, as in PyTorch
	Maximize     bool    // ascend instead: use −g

	// Groups, if any, split the parameters into PyTorch's param_groups,
	// each with its own Options over the fields above.
	Groups []Group

	rt *sgdRuntime
}

var sgdKeys = []stateKey{{name: "momentum_buffer"}}

// sgdHyper is one group's hyperparameters, resolved from the fields and the
// group's options.
type sgdHyper struct {
	lr, momentum, dampening, weightDecay float64
	nesterov, maximize                   bool
}

type sgdRuntime struct {
	states stateSet
	check  checker
	hypers []sgdHyper // per group, resolved by the last validate
	k32    sgdKernel[float32]
	k64    sgdKernel[float64]
	last   []*paramState // per parameter of the last Step; nil = no buffer
}

// NewSGD returns plain SGD with learning rate lr (set Momentum etc. on the
// result).
func NewSGD(lr float64) *SGD { return &SGD{LearningRate: lr} }

// LR returns the learning rate; a group's is LR() times its LRScale.
func (s *SGD) LR() float64 { return s.LearningRate }

// SetLR sets the learning rate of the next Step; see Group for how the
// groups' rates follow.
func (s *SGD) SetLR(lr float64) { s.LearningRate = lr }

// hyper resolves group i (the fields alone without groups).
func (s *SGD) hyper(i int) sgdHyper {
	h := sgdHyper{s.LearningRate, s.Momentum, s.Dampening, s.WeightDecay, s.Nesterov, s.Maximize}
	if len(s.Groups) == 0 {
		return h
	}
	for _, o := range s.Groups[i].Options {
		switch o.h {
		case hLRScale:
			h.lr *= o.a
		case hWeightDecay:
			h.weightDecay = o.a
		case hMomentum:
			h.momentum = o.a
		case hDampening:
			h.dampening = o.a
		case hNesterov:
			h.nesterov = o.a != 0
		case hMaximize:
			h.maximize = o.a != 0
		}
	}
	return h
}

// validate checks h with PyTorch's rules plus finiteness; its errors are to
// be prefixed with the optimizer and group.
func (h sgdHyper) validate() error {
	if err := checkRate(h.lr); err != nil {
		return err
	}
	if err := checkNonNeg("momentum", h.momentum); err != nil {
		return err
	}
	if !finite(h.dampening) {
		return fmt.Errorf("dampening %v, want a finite value", h.dampening)
	}
	if err := checkNonNeg("weight decay", h.weightDecay); err != nil {
		return err
	}
	if h.nesterov && (h.momentum <= 0 || h.dampening != 0) {
		return fmt.Errorf("Nesterov momentum requires momentum > 0 and dampening 0, got momentum %v and dampening %v",
			h.momentum, h.dampening)
	}
	return nil
}

// Validate checks the hyperparameters of every group with PyTorch's rules,
// plus finiteness (PyTorch lets NaN through).
func (s *SGD) Validate() error {
	_, err := s.validate()
	return err
}

func (s *SGD) validate() (*sgdRuntime, error) {
	const who = "optim.SGD"
	if s.rt == nil {
		s.rt = &sgdRuntime{}
	}
	rt := s.rt
	rt.hypers = rt.hypers[:0]
	for i := range max(len(s.Groups), 1) {
		if len(s.Groups) > 0 {
			if err := checkOptions(who, s.Groups, i, sgdOptions); err != nil {
				return nil, err
			}
		}
		h := s.hyper(i)
		if err := h.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", groupName(who, s.Groups, i), err)
		}
		rt.hypers = append(rt.hypers, h)
	}
	return rt, nil
}

// Step applies one SGD update to every parameter that has a gradient. If
// anything is wrong with the hyperparameters or the arguments (lengths,
// names, groups, dtypes, shapes, a NaN or ±Inf in any gradient) it returns
// an error and writes nothing.
func (s *SGD) Step(params []graph.NamedTensor, grads []*tensor.Dense) error {
	const who = "optim.SGD"
	rt, err := s.validate()
	if err != nil {
		return err
	}
	if err := rt.check.check(who, params, grads, s.Groups); err != nil {
		return err
	}
	for _, sl := range rt.check.slots {
		if ps := rt.states.get(sl.name); ps != nil {
			if err := ps.checkMatch(who, sl.p); err != nil {
				return err
			}
		}
	}

	// Nothing has been written so far; from here on every parameter is updated.
	defer graph.MarkParamsChanged() // once written: caches such as nn.KVCache start again
	var bad error
	for _, sl := range rt.check.slots {
		h := &rt.hypers[sl.group]
		var buf *tensor.Dense
		first := false
		if h.momentum != 0 {
			ps := rt.states.get(sl.name)
			if ps == nil {
				ps = rt.states.add(sl.name, sl.p, len(sgdKeys))
			}
			if ps.t[0] == nil {
				ps.t[0], first = newTensor(ps.dtype, ps.shape), true
			}
			buf = ps.t[0]
		}
		var j int
		if sl.p.Dtype() == tensor.Float32 {
			rt.k32.set(h)
			j = rt.k32.step(sl.p.Float32s(), sl.g.Float32s(), float32s(buf), first)
		} else {
			rt.k64.set(h)
			j = rt.k64.step(sl.p.Float64s(), sl.g.Float64s(), float64s(buf), first)
		}
		if j >= 0 && bad == nil {
			bad = nonFiniteParam(who, sl, j, h.lr)
		}
	}
	rt.last = rt.last[:0]
	for _, p := range params {
		rt.last = append(rt.last, rt.states.get(p.Name))
	}
	return bad
}

func (k *sgdKernel[T]) set(h *sgdHyper) {
	k.lr, k.momentum, k.dampening, k.weightDecay = h.lr, h.momentum, h.dampening, h.weightDecay
	k.nesterov, k.maximize = h.nesterov, h.maximize
}

// State returns the live momentum buffers, "<param>.momentum_buffer", for
// the parameters that have one (none while their momentum is 0, as in
// PyTorch). The keys do not depend on the groups.
func (s *SGD) State() []graph.NamedTensor {
	if s.rt == nil {
		return nil
	}
	return s.rt.states.list(sgdKeys)
}

// LoadState replaces the momentum buffers with copies of those in state. A
// parameter without a buffer in state starts fresh: its next step sets the
// buffer to the gradient. It validates the hyperparameters, the groups and
// every tensor before it changes anything.
func (s *SGD) LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error {
	rt, err := s.validate()
	if err != nil {
		return err
	}
	st, err := loadState("optim.SGD", &rt.check, s.Groups, sgdKeys, func(int, int) bool { return true }, params, state)
	if err != nil {
		return err
	}
	rt.states = st
	rt.last = rt.last[:0]
	for _, p := range params {
		rt.last = append(rt.last, st.get(p.Name))
	}
	return nil
}

// MomentumBuffer returns the live momentum buffer of the named parameter,
// or nil if it has none yet (before its first step, or with Momentum 0).
func (s *SGD) MomentumBuffer(name string) *tensor.Dense {
	if s.rt == nil {
		return nil
	}
	if ps := s.rt.states.get(name); ps != nil {
		return ps.t[0]
	}
	return nil
}

// MomentumBuffers returns the live momentum buffers of the parameters of
// the last Step (or LoadState), in the same order; an entry is nil for a
// parameter without a buffer yet. Before the first Step it returns nil.
func (s *SGD) MomentumBuffers() []*tensor.Dense {
	if s.rt == nil || s.rt.last == nil {
		return nil
	}
	out := make([]*tensor.Dense, len(s.rt.last))
	for i, ps := range s.rt.last {
		if ps != nil {
			out[i] = ps.t[0]
		}
	}
	return out
}

func float32s(t *tensor.Dense) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

func float64s(t *tensor.Dense) []float64 {
	if t == nil {
		return nil
	}
	return t.Float64s()
}

func nonFiniteParam(who string, sl slot, j int, lr float64) error {
	return fmt.Errorf("%s: parameter %q %v is %v at element %d (index %v) after the update with learning rate %v: %w",
		who, sl.name, sl.p.Shape(), at(sl.p, j), j, unravel(sl.p.Shape(), j), lr, ErrNonFiniteParam)
}
