package optim

// Stochastic gradient descent with momentum, dampening, Nesterov and L2
// weight decay, step for step as torch.optim.SGD.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// SGD is torch.optim.SGD. The zero value of every field but LearningRate is
// PyTorch's default, so a literal is enough:
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
// Hyperparameters may be changed between steps; Step validates them every
// time. State is allocated on the first Step that has a gradient for a
// parameter. Do not copy an SGD after its first Step (copies share state).
type SGD struct {
	LearningRate float64 // lr; the field cannot be called LR, which is the Optimizer method
	Momentum     float64 // μ ≥ 0
	Dampening    float64
	WeightDecay  float64 // λ ≥ 0: L2 penalty added to the gradient
	Nesterov     bool    // requires Momentum > 0 and Dampening = 0, as in PyTorch
	Maximize     bool    // ascend instead: use −g

	rt *sgdRuntime
}

var sgdKeys = []stateKey{{name: "momentum_buffer"}}

type sgdRuntime struct {
	states stateSet
	check  checker
	k32    sgdKernel[float32]
	k64    sgdKernel[float64]
	last   []*paramState // per parameter of the last Step; nil = no buffer
}

// NewSGD returns plain SGD with learning rate lr (set Momentum etc. on the
// result).
func NewSGD(lr float64) *SGD { return &SGD{LearningRate: lr} }

// LR returns the learning rate.
func (s *SGD) LR() float64 { return s.LearningRate }

// SetLR sets the learning rate of the next Step.
func (s *SGD) SetLR(lr float64) { s.LearningRate = lr }

// Validate checks the hyperparameters with PyTorch's rules, plus
// finiteness (PyTorch lets NaN through).
func (s *SGD) Validate() error {
	const who = "optim.SGD"
	if err := checkRate(who, s.LearningRate); err != nil {
		return err
	}
	if err := checkNonNeg(who, "momentum", s.Momentum); err != nil {
		return err
	}
	if !finite(s.Dampening) {
		return fmt.Errorf("%s: dampening %v, want a finite value", who, s.Dampening)
	}
	if err := checkNonNeg(who, "weight decay", s.WeightDecay); err != nil {
		return err
	}
	if s.Nesterov && (s.Momentum <= 0 || s.Dampening != 0) {
		return fmt.Errorf("%s: Nesterov momentum requires momentum > 0 and dampening 0, got momentum %v and dampening %v",
			who, s.Momentum, s.Dampening)
	}
	return nil
}

func (s *SGD) runtime() *sgdRuntime {
	if s.rt == nil {
		s.rt = &sgdRuntime{}
	}
	return s.rt
}

// Step applies one SGD update to every parameter that has a gradient. If
// anything is wrong with the arguments (lengths, names, dtypes, shapes, a
// NaN or ±Inf in any gradient) it returns an error and writes nothing.
func (s *SGD) Step(params []graph.NamedTensor, grads []*tensor.Dense) error {
	const who = "optim.SGD"
	if err := s.Validate(); err != nil {
		return err
	}
	rt := s.runtime()
	if err := rt.check.check(who, params, grads); err != nil {
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
	rt.k32.set(s)
	rt.k64.set(s)
	var bad error
	for _, sl := range rt.check.slots {
		var buf *tensor.Dense
		first := false
		if s.Momentum != 0 {
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
			j = rt.k32.step(sl.p.Float32s(), sl.g.Float32s(), float32s(buf), first)
		} else {
			j = rt.k64.step(sl.p.Float64s(), sl.g.Float64s(), float64s(buf), first)
		}
		if j >= 0 && bad == nil {
			bad = nonFiniteParam(who, sl, j, s.LearningRate)
		}
	}
	rt.last = rt.last[:0]
	for _, p := range params {
		rt.last = append(rt.last, rt.states.get(p.Name))
	}
	return bad
}

func (k *sgdKernel[T]) set(s *SGD) {
	k.lr, k.momentum, k.dampening, k.weightDecay = s.LearningRate, s.Momentum, s.Dampening, s.WeightDecay
	k.nesterov, k.maximize = s.Nesterov, s.Maximize
}

// State returns the live momentum buffers, "<param>.momentum_buffer", for
// the parameters that have one (none when Momentum is 0, as in PyTorch).
func (s *SGD) State() []graph.NamedTensor {
	if s.rt == nil {
		return nil
	}
	return s.rt.states.list(sgdKeys)
}

// LoadState replaces the momentum buffers with copies of those in state. A
// parameter without a buffer in state starts fresh: its next step sets the
// buffer to the gradient.
func (s *SGD) LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error {
	rt := s.runtime()
	st, err := loadState("optim.SGD", &rt.check, sgdKeys, []bool{true}, params, state)
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
