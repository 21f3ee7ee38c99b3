package optim

// Parameter groups, PyTorch's param_groups: subsets of the parameters with
// hyperparameters of their own, and nanoGPT's grouping by dimension.

import (
	"fmt"
	"strings"

	"github.com/geluproject/gelu/graph"
)

// Group is a set of parameters with some hyperparameters of their own, as
// one of PyTorch's param_groups. The hyperparameters a group does not set
// follow the optimizer's fields, read at every Step.
//
// When an optimizer has groups, every parameter passed to Step must be in
// exactly one of them: a parameter in two groups, in none, or a name that
// is not among the parameters is an error naming it. An optimizer without
// groups treats all parameters as one group.
//
// A group's learning rate is the optimizer's, LR(), times its LRScale (1
// unless set). A schedule s that the loop applies with SetLR(s.LR(t))
// therefore gives a group the rate k·s(t), k its scale: every group's rate
// changes by the same factor, s(t)/s(0), from its initial rate k·s(0),
// which is what PyTorch's LambdaLR does with the multiplier
// λ(t) = s(t)/s(0). nanoGPT's loop, which sets every group's lr to
// get_lr(it), is the case k = 1. A PyTorch group {'params': …, 'lr': Lᵢ}
// of an optimizer built with lr L is LRScale(Lᵢ/L) here.
type Group struct {
	Params  []string // parameter names, as in the NamedTensors passed to Step
	Options []Option // the hyperparameters this group sets
}

// NewGroup returns a group of the named parameters with the given options.
func NewGroup(params []string, opts ...Option) Group {
	return Group{Params: params, Options: opts}
}

// Option sets one hyperparameter of a Group. Each optimizer accepts the
// options of its own hyperparameters (SGD: LRScale, WeightDecay, Momentum,
// Dampening, Nesterov, Maximize; Adam: LRScale, WeightDecay, Betas, Eps,
// AMSGrad, Maximize); Step rejects the others, naming them.
type Option struct {
	h    hyper
	a, b float64
}

// hyper is a hyperparameter a group may set. The zero Option sets none and
// is an error, so that it cannot stand for LRScale(0).
type hyper uint8

const (
	hNone hyper = iota
	hLRScale
	hWeightDecay
	hMomentum
	hDampening
	hNesterov
	hBetas
	hEps
	hAMSGrad
	hMaximize
	numHypers
)

// hyperNames are the options' names in messages, PyTorch's param_group
// keys where it has one.
var hyperNames = [numHypers]string{"", "lr_scale", "weight_decay", "momentum", "dampening", "nesterov", "betas", "eps", "amsgrad", "maximize"}

// hyperSet is a set of hypers: the options an optimizer accepts.
type hyperSet uint16

func setOf(hs ...hyper) (s hyperSet) {
	for _, h := range hs {
		s |= 1 << h
	}
	return s
}

func (s hyperSet) has(h hyper) bool { return s&(1<<h) != 0 }

func (s hyperSet) String() string {
	var names []string
	for h := range numHypers {
		if s.has(h) {
			names = append(names, hyperNames[h])
		}
	}
	return strings.Join(names, ", ")
}

var (
	sgdOptions  = setOf(hLRScale, hWeightDecay, hMomentum, hDampening, hNesterov, hMaximize)
	adamOptions = setOf(hLRScale, hWeightDecay, hBetas, hEps, hAMSGrad, hMaximize)
)

// LRScale makes a group's learning rate k times the optimizer's (k ≥ 0;
// 0 freezes the group's parameters while their state still advances, as
// lr 0 does in PyTorch).
func LRScale(k float64) Option { return Option{h: hLRScale, a: k} }

// WeightDecay sets a group's weight decay λ (SGD's and Adam's L2 term,
// AdamW's decoupled factor 1 − lr·λ).
func WeightDecay(lambda float64) Option { return Option{h: hWeightDecay, a: lambda} }

// Momentum sets an SGD group's momentum.
func Momentum(mu float64) Option { return Option{h: hMomentum, a: mu} }

// Dampening sets an SGD group's dampening.
func Dampening(d float64) Option { return Option{h: hDampening, a: d} }

// Nesterov turns Nesterov momentum on or off for an SGD group.
func Nesterov(on bool) Option { return Option{h: hNesterov, a: b2f(on)} }

// Betas sets an Adam group's β1 and β2.
func Betas(beta1, beta2 float64) Option { return Option{h: hBetas, a: beta1, b: beta2} }

// Eps sets an Adam group's eps.
func Eps(eps float64) Option { return Option{h: hEps, a: eps} }

// AMSGrad turns AMSGrad on or off for an Adam group.
func AMSGrad(on bool) Option { return Option{h: hAMSGrad, a: b2f(on)} }

// Maximize makes a group ascend its gradient instead.
func Maximize(on bool) Option { return Option{h: hMaximize, a: b2f(on)} }

func b2f(on bool) float64 {
	if on {
		return 1
	}
	return 0
}

// String gives the option as PyTorch's param_group key and value.
func (o Option) String() string {
	switch o.h {
	case hBetas:
		return fmt.Sprintf("betas=(%v, %v)", o.a, o.b)
	case hNesterov, hAMSGrad, hMaximize:
		return fmt.Sprintf("%s=%v", hyperNames[o.h], o.a != 0)
	}
	return fmt.Sprintf("%s=%v", hyperNames[o.h], o.a)
}

// groupName is who, or who and the group's index when there are groups;
// built only for messages.
func groupName(who string, groups []Group, i int) string {
	if len(groups) == 0 {
		return who
	}
	return fmt.Sprintf("%s group %d", who, i)
}

// checkOptions reports an option the optimizer does not take, a repeated
// one, and an LRScale that is not a finite value ≥ 0.
func checkOptions(who string, groups []Group, i int, accepted hyperSet) error {
	var seen hyperSet
	for _, o := range groups[i].Options {
		if o.h == hNone || o.h >= numHypers {
			return fmt.Errorf("%s: a zero Option; make options with LRScale, WeightDecay, Betas etc.", groupName(who, groups, i))
		}
		if !accepted.has(o.h) {
			return fmt.Errorf("%s: %v is not a hyperparameter of this optimizer; it takes %v",
				groupName(who, groups, i), o, accepted)
		}
		if seen.has(o.h) {
			return fmt.Errorf("%s: %s is set twice", groupName(who, groups, i), hyperNames[o.h])
		}
		seen |= 1 << o.h
		if o.h == hLRScale && !(finite(o.a) && o.a >= 0) {
			return fmt.Errorf("%s: lr_scale %v, want a finite value ≥ 0", groupName(who, groups, i), o.a)
		}
	}
	return nil
}

// DecayGroups splits params into nanoGPT's two groups (configure_optimizers
// in its model.py): the parameters with two or more dimensions (the weights
// of matrix products, embeddings) with weight decay weightDecay, and the
// others (biases, LayerNorm weights) with none. The rule is the tensor's
// number of dimensions, so a model whose shapes differ from PyTorch's is
// grouped by its own. Either group may be empty.
func DecayGroups(params []graph.NamedTensor, weightDecay float64) []Group {
	decay, noDecay := []string{}, []string{}
	for _, p := range params {
		if p.Value != nil && p.Value.Dims() >= 2 {
			decay = append(decay, p.Name)
		} else {
			noDecay = append(noDecay, p.Name)
		}
	}
	return []Group{NewGroup(decay, WeightDecay(weightDecay)), NewGroup(noDecay, WeightDecay(0))}
}

// NanoGPTAdamW is nanoGPT's configure_optimizers with train.py's betas:
// AdamW at learning rate lr with betas (0.9, 0.95), eps 1e-8, and
// DecayGroups(params, weightDecay). nanoGPT's train.py defaults are lr 6e-4
// and weight decay 0.1; it sets every group's lr to its schedule's, which
// SetLR does here.
func NanoGPTAdamW(params []graph.NamedTensor, lr, weightDecay float64) *Adam {
	a := NewAdamW(lr)
	a.Beta2 = 0.95
	a.Groups = DecayGroups(params, weightDecay)
	return a
}
