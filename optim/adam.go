package optim

// Adam with L2 weight decay added to the gradient (torch.optim.Adam) or
// decoupled weight decay (torch.optim.AdamW): one type, one Step.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// Adam is torch.optim.Adam, or torch.optim.AdamW when Decoupled is set.
// Make it with NewAdam or NewAdamW, which set PyTorch's defaults, and
// change fields after: a zero β or eps is a valid setting different from
// the default, so a struct literal cannot mean "the defaults", and Step,
// Validate and LoadState reject an Adam the constructors did not make.
//
// Each parameter keeps a step count t and moments m, v; one step is
//
//	p = (1 − lr·λ)·p   if Decoupled (AdamW), else g = g + λ·p (L2 decay, folded into the moments)
//	t = t + 1
//	m = β1·m + (1 − β1)·g
//	v = β2·v + (1 − β2)·g²
//	p = p − lr/(1 − β1^t) · m / (√v / √(1 − β2^t) + eps)
//
// With AMSGrad, v in the last line is the running maximum of v. The fields
// apply to every parameter, or are the defaults of Groups (see Group).
// Hyperparameters may change between steps; Step validates them every time.
// Do not copy an Adam after its first Step (copies share state).
type Adam struct {
	LearningRate float64 // lr; the field cannot be called LR, which is the Optimizer method
	Beta1, Beta2 float64 // in [0, 1)
	Eps          float64 // > 0 (PyTorch allows 0, which divides 0 by 0 where v = 0)
	WeightDecay  float64 // λ ≥ 0; with Decoupled, lr·λ ≤ 1 (a larger product would flip the parameters' signs)
	Decoupled    bool    // AdamW: decay the parameters instead of adding λ·p to the gradient
	AMSGrad      bool
	Maximize     bool

	// Groups, if any, split the parameters into PyTorch's param_groups,
	// each with its own Options over the fields above.
	Groups []Group

	made bool
	rt   *adamRuntime
}

// NewAdam returns torch.optim.Adam's defaults: betas (0.9, 0.999), eps
// 1e-8, no weight decay.
func NewAdam(lr float64) *Adam {
	return &Adam{LearningRate: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, made: true}
}

// NewAdamW returns torch.optim.AdamW's defaults: decoupled weight decay
// 0.01, betas (0.9, 0.999), eps 1e-8.
func NewAdamW(lr float64) *Adam {
	return &Adam{LearningRate: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2, Decoupled: true, made: true}
}

// adamKeys are PyTorch's per-parameter state keys, in its insertion order.
var adamKeys = []stateKey{{name: "step", step: true}, {name: "exp_avg"}, {name: "exp_avg_sq", sq: true}, {name: "max_exp_avg_sq", sq: true}}

const (
	kStep = iota
	kExpAvg
	kExpAvgSq
	kMaxExpAvgSq
)

// adamHyper is one group's hyperparameters, resolved from the fields and
// the group's options.
type adamHyper struct {
	lr, beta1, beta2, eps, weightDecay float64
	amsgrad, maximize, decoupled       bool
}

func (a *Adam) who() string {
	if a.Decoupled {
		return "optim.AdamW"
	}
	return "optim.Adam"
}

// hyper resolves group i (the fields alone without groups).
func (a *Adam) hyper(i int) adamHyper {
	h := adamHyper{a.LearningRate, a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.AMSGrad, a.Maximize, a.Decoupled}
	if len(a.Groups) == 0 {
		return h
	}
	for _, o := range a.Groups[i].Options {
		switch o.h {
		case hLRScale:
			h.lr *= o.a
		case hWeightDecay:
			h.weightDecay = o.a
		case hBetas:
			h.beta1, h.beta2 = o.a, o.b
		case hEps:
			h.eps = o.a
		case hAMSGrad:
			h.amsgrad = o.a != 0
		case hMaximize:
			h.maximize = o.a != 0
		}
	}
	return h
}

// validate checks h; its errors are to be prefixed with the optimizer and
// group.
func (h adamHyper) validate() error {
	if err := checkRate(h.lr); err != nil {
		return err
	}
	if !(h.beta1 >= 0 && h.beta1 < 1) {
		return fmt.Errorf("beta1 %v, want a value in [0, 1)", h.beta1)
	}
	if !(h.beta2 >= 0 && h.beta2 < 1) {
		return fmt.Errorf("beta2 %v, want a value in [0, 1)", h.beta2)
	}
	if !finite(h.eps) || h.eps <= 0 {
		return fmt.Errorf("eps %v, want a finite value > 0 (NewAdam and NewAdamW set PyTorch's default 1e-8)", h.eps)
	}
	if err := checkNonNeg("weight decay", h.weightDecay); err != nil {
		return err
	}
	if h.decoupled && h.lr*h.weightDecay > 1 {
		return fmt.Errorf("learning rate %v × weight decay %v > 1 would flip the parameters' signs", h.lr, h.weightDecay)
	}
	return nil
}

type adamRuntime struct {
	states stateSet
	check  checker
	hypers []adamHyper // per group, resolved by the last validate
	k32    adamKernel[float32]
	k64    adamKernel[float64]
}

func (a *Adam) runtime() *adamRuntime {
	if a.rt == nil {
		a.rt = &adamRuntime{}
	}
	return a.rt
}

// Validate checks the hyperparameters of every group with PyTorch's rules,
// plus finiteness, eps > 0 and, for AdamW, lr·λ ≤ 1.
func (a *Adam) Validate() error {
	_, err := a.validate()
	return err
}

// validate resolves and checks every group's hyperparameters.
func (a *Adam) validate() (*adamRuntime, error) {
	who := a.who()
	if !a.made {
		return nil, fmt.Errorf("%s: not made by optim.NewAdam or optim.NewAdamW; a struct literal leaves betas and eps at 0, not PyTorch's defaults (0.9, 0.999) and 1e-8", who)
	}
	rt := a.runtime()
	rt.hypers = rt.hypers[:0]
	for i := range max(len(a.Groups), 1) {
		if len(a.Groups) > 0 {
			if err := checkOptions(who, a.Groups, i, adamOptions); err != nil {
				return nil, err
			}
		}
		h := a.hyper(i)
		if err := h.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", groupName(who, a.Groups, i), err)
		}
		rt.hypers = append(rt.hypers, h)
	}
	return rt, nil
}

// LR returns the learning rate; a group's is LR() times its LRScale.
func (a *Adam) LR() float64 { return a.LearningRate }

// SetLR sets the learning rate of the next Step; see Group for how the
// groups' rates follow.
func (a *Adam) SetLR(lr float64) { a.LearningRate = lr }

// Step applies one update to every parameter that has a gradient. If
// anything is wrong with the hyperparameters or the arguments (lengths,
// names, groups, dtypes, shapes, a NaN or ±Inf in any gradient) it returns
// an error and writes nothing.
func (a *Adam) Step(params []graph.NamedTensor, grads []*tensor.Dense) error {
	who := a.who()
	rt, err := a.validate()
	if err != nil {
		return err
	}
	if err := rt.check.check(who, params, grads, a.Groups); err != nil {
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
			rt.k32.set(h, stepSize, bc2sqrt)
			j = rt.k32.step(sl.p.Float32s(), sl.g.Float32s(), ps.t[kExpAvg].Float32s(), ps.t[kExpAvgSq].Float32s(), float32s(vmax))
		} else {
			rt.k64.set(h, stepSize, bc2sqrt)
			j = rt.k64.step(sl.p.Float64s(), sl.g.Float64s(), ps.t[kExpAvg].Float64s(), ps.t[kExpAvgSq].Float64s(), float64s(vmax))
		}
		if j >= 0 && bad == nil {
			bad = nonFiniteParam(who, sl, j, h.lr)
		}
	}
	return bad
}

func (k *adamKernel[T]) set(h *adamHyper, stepSize, bc2sqrt float64) {
	k.beta1, k.beta2, k.eps, k.weightDecay = h.beta1, h.beta2, h.eps, h.weightDecay
	k.decoupled, k.maximize = h.decoupled, h.maximize
	k.decay = 1
	if h.decoupled {
		k.decay = 1 - h.lr*h.weightDecay
	}
	k.stepSize, k.bc2sqrt = stepSize, bc2sqrt
}

// State returns the live state, per parameter "<param>.step" (a float64
// tensor of shape (1); PyTorch keeps a float32 scalar), "<param>.exp_avg",
// "<param>.exp_avg_sq" and, once AMSGrad has been used for it,
// "<param>.max_exp_avg_sq". The keys do not depend on the groups.
func (a *Adam) State() []graph.NamedTensor {
	if a.rt == nil {
		return nil
	}
	return a.rt.states.list(adamKeys)
}

// LoadState replaces the state with copies of the tensors in state: for
// each parameter, all of step, exp_avg, exp_avg_sq (and max_exp_avg_sq when
// its group uses AMSGrad) or none of them. It validates the
// hyperparameters, the groups and every tensor before it changes anything.
func (a *Adam) LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error {
	rt, err := a.validate()
	if err != nil {
		return err
	}
	want := func(param, key int) bool { return key != kMaxExpAvgSq || rt.hypers[rt.check.group[param]].amsgrad }
	st, err := loadState(a.who(), &rt.check, a.Groups, adamKeys, want, params, state)
	if err != nil {
		return err
	}
	rt.states = st
	return nil
}

// ExpAvg returns the live first moment m of the named parameter, or nil
// before its first step.
func (a *Adam) ExpAvg(name string) *tensor.Dense { return a.tensor(name, kExpAvg) }

// ExpAvgSq returns the live second moment v of the named parameter, or nil
// before its first step.
func (a *Adam) ExpAvgSq(name string) *tensor.Dense { return a.tensor(name, kExpAvgSq) }

// Steps returns the number of steps the named parameter has taken.
func (a *Adam) Steps(name string) int {
	if t := a.tensor(name, kStep); t != nil {
		return int(t.Float64s()[0])
	}
	return 0
}

func (a *Adam) tensor(name string, key int) *tensor.Dense {
	if a.rt == nil {
		return nil
	}
	if ps := a.rt.states.get(name); ps != nil {
		return ps.t[key]
	}
	return nil
}
