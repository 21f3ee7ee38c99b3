package optim

// Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight
// decay), step for step as torch.optim.Adam and torch.optim.AdamW.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Adam is torch.optim.Adam. Start from NewAdam, which sets PyTorch's
// defaults: a zero Beta or Eps is a valid but different optimizer, and
// Step rejects Eps = 0 so that a forgotten default is caught.
//
// Each parameter keeps a step count t and moments m, v; one step is
//
//	g = g + λ·p                               (L2 decay, folded into the moments)
//	t = t + 1
//	m = β1·m + (1 − β1)·g
//	v = β2·v + (1 − β2)·g²
//	p = p − lr/(1 − β1^t) · m / (√v / √(1 − β2^t) + eps)
//
// With AMSGrad, v in the last line is the running maximum of v.
// Hyperparameters may change between steps; Step validates them every time.
// Do not copy an Adam after its first Step (copies share state).
type Adam struct {
	LearningRate float64 // lr; the field cannot be called LR, which is the Optimizer method
	Beta1, Beta2 float64 // in [0, 1)
	Eps          float64 // > 0 (PyTorch allows 0, which divides 0 by 0 where v = 0)
	WeightDecay  float64 // λ ≥ 0: L2 penalty added to the gradient
	AMSGrad      bool
	Maximize     bool

	rt *adamRuntime
}

// AdamW is torch.optim.AdamW: Adam without the L2 term, whose parameters
// shrink by the factor (1 − lr·λ) before each update instead. Start from
// NewAdamW (PyTorch's defaults, including λ = 0.01).
type AdamW struct {
	LearningRate float64
	Beta1, Beta2 float64
	Eps          float64
	WeightDecay  float64 // λ ≥ 0 with lr·λ ≤ 1 (a larger product would flip the parameters' signs)
	AMSGrad      bool
	Maximize     bool

	rt *adamRuntime
}

// NewAdam returns Adam with PyTorch's defaults: betas (0.9, 0.999), eps
// 1e-8, no weight decay.
func NewAdam(lr float64) *Adam {
	return &Adam{LearningRate: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// NewAdamW returns AdamW with PyTorch's defaults: betas (0.9, 0.999), eps
// 1e-8, weight decay 0.01.
func NewAdamW(lr float64) *AdamW {
	return &AdamW{LearningRate: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2}
}

// adamKeys are PyTorch's per-parameter state keys, in its insertion order.
var adamKeys = []stateKey{{name: "step", step: true}, {name: "exp_avg"}, {name: "exp_avg_sq", sq: true}, {name: "max_exp_avg_sq", sq: true}}

const (
	kStep = iota
	kExpAvg
	kExpAvgSq
	kMaxExpAvgSq
)

// adamHyper is the common view of Adam's and AdamW's fields.
type adamHyper struct {
	who                                string
	lr, beta1, beta2, eps, weightDecay float64
	amsgrad, maximize, decoupled       bool
}

func (a *Adam) hyper() adamHyper {
	return adamHyper{"optim.Adam", a.LearningRate, a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.AMSGrad, a.Maximize, false}
}

func (a *AdamW) hyper() adamHyper {
	return adamHyper{"optim.AdamW", a.LearningRate, a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.AMSGrad, a.Maximize, true}
}

func (h adamHyper) validate() error {
	if err := checkRate(h.who, h.lr); err != nil {
		return err
	}
	if !(h.beta1 >= 0 && h.beta1 < 1) {
		return fmt.Errorf("%s: beta1 %v, want a value in [0, 1)", h.who, h.beta1)
	}
	if !(h.beta2 >= 0 && h.beta2 < 1) {
		return fmt.Errorf("%s: beta2 %v, want a value in [0, 1)", h.who, h.beta2)
	}
	if !finite(h.eps) || h.eps <= 0 {
		return fmt.Errorf("%s: eps %v, want a finite value > 0 (NewAdam/NewAdamW set PyTorch's default 1e-8)", h.who, h.eps)
	}
	if err := checkNonNeg(h.who, "weight decay", h.weightDecay); err != nil {
		return err
	}
	if h.decoupled && h.lr*h.weightDecay > 1 {
		return fmt.Errorf("%s: learning rate %v × weight decay %v > 1 would flip the parameters' signs", h.who, h.lr, h.weightDecay)
	}
	return nil
}

type adamRuntime struct {
	states stateSet
	check  checker
	k32    adamKernel[float32]
	k64    adamKernel[float64]
}

// Validate checks the hyperparameters with PyTorch's rules, plus
// finiteness and eps > 0.
func (a *Adam) Validate() error { return a.hyper().validate() }

// Validate checks the hyperparameters with PyTorch's rules, plus
// finiteness, eps > 0 and lr·λ ≤ 1.
func (a *AdamW) Validate() error { return a.hyper().validate() }

// LR returns the learning rate.
func (a *Adam) LR() float64 { return a.LearningRate }

// LR returns the learning rate.
func (a *AdamW) LR() float64 { return a.LearningRate }

// SetLR sets the learning rate of the next Step.
func (a *Adam) SetLR(lr float64) { a.LearningRate = lr }

// SetLR sets the learning rate of the next Step.
func (a *AdamW) SetLR(lr float64) { a.LearningRate = lr }

// Step applies one Adam update to every parameter that has a gradient. If
// anything is wrong with the arguments (lengths, names, dtypes, shapes, a
// NaN or ±Inf in any gradient) it returns an error and writes nothing.
func (a *Adam) Step(params []graph.NamedTensor, grads []*tensor.Dense) error {
	if a.rt == nil {
		a.rt = &adamRuntime{}
	}
	return a.rt.step(a.hyper(), params, grads)
}

// Step applies one AdamW update to every parameter that has a gradient. If
// anything is wrong with the arguments (lengths, names, dtypes, shapes, a
// NaN or ±Inf in any gradient) it returns an error and writes nothing.
func (a *AdamW) Step(params []graph.NamedTensor, grads []*tensor.Dense) error {
	if a.rt == nil {
		a.rt = &adamRuntime{}
	}
	return a.rt.step(a.hyper(), params, grads)
}

func (rt *adamRuntime) step(h adamHyper, params []graph.NamedTensor, grads []*tensor.Dense) error {
	if err := h.validate(); err != nil {
		return err
	}
	if err := rt.check.check(h.who, params, grads); err != nil {
		return err
	}
	for _, sl := range rt.check.slots {
		if ps := rt.states.get(sl.name); ps != nil {
			if err := ps.checkMatch(h.who, sl.p); err != nil {
				return err
			}
		}
	}

	// Nothing has been written so far; from here on every parameter is updated.
	defer graph.MarkParamsChanged() // once written: caches such as nn.KVCache start again
	rt.k32.set(h)
	rt.k64.set(h)
	var bad error
	for _, sl := range rt.check.slots {
		ps := rt.states.get(sl.name)
		if ps == nil {
			ps = rt.states.add(sl.name, sl.p, len(adamKeys))
		}
		if ps.t[kStep] == nil {
			ps.t[kStep] = newStep()
			ps.t[kExpAvg] = newTensor(ps.dtype, ps.shape)
			ps.t[kExpAvgSq] = newTensor(ps.dtype, ps.shape)
		}
		if h.amsgrad && ps.t[kMaxExpAvgSq] == nil {
			ps.t[kMaxExpAvgSq] = newTensor(ps.dtype, ps.shape)
		}
		var vmax *tensor.Dense
		if h.amsgrad {
			vmax = ps.t[kMaxExpAvgSq]
		}
		cnt := ps.t[kStep].Float64s()
		cnt[0]++
		t := cnt[0]
		stepSize := h.lr / (1 - math.Pow(h.beta1, t))
		bc2sqrt := math.Sqrt(1 - math.Pow(h.beta2, t))
		var j int
		if sl.p.Dtype() == tensor.Float32 {
			rt.k32.stepSize, rt.k32.bc2sqrt = stepSize, bc2sqrt
			j = rt.k32.step(sl.p.Float32s(), sl.g.Float32s(), ps.t[kExpAvg].Float32s(), ps.t[kExpAvgSq].Float32s(), float32s(vmax))
		} else {
			rt.k64.stepSize, rt.k64.bc2sqrt = stepSize, bc2sqrt
			j = rt.k64.step(sl.p.Float64s(), sl.g.Float64s(), ps.t[kExpAvg].Float64s(), ps.t[kExpAvgSq].Float64s(), float64s(vmax))
		}
		if j >= 0 && bad == nil {
			bad = nonFiniteParam(h.who, sl, j, h.lr)
		}
	}
	return bad
}

func (k *adamKernel[T]) set(h adamHyper) {
	k.beta1, k.beta2, k.eps, k.weightDecay = h.beta1, h.beta2, h.eps, h.weightDecay
	k.decoupled, k.maximize = h.decoupled, h.maximize
	k.decay = 1
	if h.decoupled {
		k.decay = 1 - h.lr*h.weightDecay
	}
}

// State returns the live state, per parameter "<param>.step" (a float64
// tensor of shape (1); PyTorch keeps a float32 scalar), "<param>.exp_avg",
// "<param>.exp_avg_sq" and, once AMSGrad has been used,
// "<param>.max_exp_avg_sq".
func (a *Adam) State() []graph.NamedTensor { return a.rt.list() }

// State returns the live state; see Adam.State.
func (a *AdamW) State() []graph.NamedTensor { return a.rt.list() }

func (rt *adamRuntime) list() []graph.NamedTensor {
	if rt == nil {
		return nil
	}
	return rt.states.list(adamKeys)
}

// LoadState replaces the state with copies of the tensors in state: for
// each parameter, all of step, exp_avg, exp_avg_sq (and max_exp_avg_sq when
// AMSGrad is set) or none of them.
func (a *Adam) LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error {
	if a.rt == nil {
		a.rt = &adamRuntime{}
	}
	return a.rt.load(a.hyper(), params, state)
}

// LoadState replaces the state; see Adam.LoadState.
func (a *AdamW) LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error {
	if a.rt == nil {
		a.rt = &adamRuntime{}
	}
	return a.rt.load(a.hyper(), params, state)
}

func (rt *adamRuntime) load(h adamHyper, params, state []graph.NamedTensor) error {
	st, err := loadState(h.who, &rt.check, adamKeys, []bool{true, true, true, h.amsgrad}, params, state)
	if err != nil {
		return err
	}
	rt.states = st
	return nil
}

// ExpAvg returns the live first moment m of the named parameter, or nil
// before its first step.
func (a *Adam) ExpAvg(name string) *tensor.Dense { return a.rt.tensor(name, kExpAvg) }

// ExpAvgSq returns the live second moment v of the named parameter, or nil
// before its first step.
func (a *Adam) ExpAvgSq(name string) *tensor.Dense { return a.rt.tensor(name, kExpAvgSq) }

// Steps returns the number of steps the named parameter has taken.
func (a *Adam) Steps(name string) int { return a.rt.steps(name) }

// ExpAvg returns the live first moment m of the named parameter, or nil
// before its first step.
func (a *AdamW) ExpAvg(name string) *tensor.Dense { return a.rt.tensor(name, kExpAvg) }

// ExpAvgSq returns the live second moment v of the named parameter, or nil
// before its first step.
func (a *AdamW) ExpAvgSq(name string) *tensor.Dense { return a.rt.tensor(name, kExpAvgSq) }

// Steps returns the number of steps the named parameter has taken.
func (a *AdamW) Steps(name string) int { return a.rt.steps(name) }

func (rt *adamRuntime) tensor(name string, key int) *tensor.Dense {
	if rt == nil {
		return nil
	}
	if ps := rt.states.get(name); ps != nil {
		return ps.t[key]
	}
	return nil
}

func (rt *adamRuntime) steps(name string) int {
	if t := rt.tensor(name, kStep); t != nil {
		return int(t.Float64s()[0])
	}
	return 0
}
