package optim

// The Optimizer interface and the checks every Step makes before it writes
// anything: a step either updates every parameter or none.

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/parallel"
	"gorgonia.org/tensor"
)

// Optimizer updates parameters in place from their gradients.
type Optimizer interface {
	// Step applies one update; grads[i] is the gradient of params[i] (same
	// dtype and shape). A nil gradient skips its parameter, as a parameter
	// whose .grad is None in PyTorch: no decay, no state change. Step
	// checks everything, NaN and ±Inf in the gradients included, before it
	// writes anything.
	Step(params []graph.NamedTensor, grads []*tensor.Dense) error
	// LR returns the learning rate used by the next Step. With parameter
	// groups, a group's rate is LR() times its LRScale (see Group).
	LR() float64
	// SetLR sets the learning rate used by the next Step (a schedule calls
	// it every step). Step rejects a negative or non-finite rate.
	SetLR(lr float64)
	// State returns the optimizer's state as named tensors for checkpoints,
	// named after the parameter: "<param>.momentum_buffer" (SGD),
	// "<param>.step", "<param>.exp_avg", "<param>.exp_avg_sq" (Adam,
	// AdamW), matching the keys of PyTorch's optimizer state, whatever the
	// groups. The tensors are the live state, not copies: the next Step
	// changes them.
	State() []graph.NamedTensor
	// LoadState replaces the state with copies of tensors produced by State
	// for the same parameters. For each parameter either all of the keys
	// its group's settings use are present or none (then it starts fresh,
	// as before its first step). Missing or extra names, shape, dtype,
	// non-finite values and a grouping that does not cover the parameters
	// are errors; LoadState validates everything before it changes
	// anything, so on error the state is unchanged.
	LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error
}

// ErrNonFiniteParam is wrapped by the error Step returns when the update
// produced NaN or ±Inf in a parameter (from finite gradients: a learning
// rate too large, or a parameter that was already non-finite). Unlike a
// non-finite gradient, which is reported before anything is written (and
// wraps graph.ErrNonFinite), the step has been applied.
var ErrNonFiniteParam = errors.New("non-finite parameter after the update")

type float interface{ ~float32 | ~float64 }

// slot is one (parameter, gradient) pair of a Step, after validation, with
// the index of the parameter's group.
type slot struct {
	name  string
	p, g  *tensor.Dense
	group int
}

// checker validates the arguments of Step. It is reused across steps so
// that validating allocates nothing once the first step is done.
type checker struct {
	index map[string]int // parameter name → position in params
	group []int          // group of each parameter
	slots []slot
	f32   finiteKernel[float32]
	f64   finiteKernel[float64]
}

// check validates params and grads: equal lengths, unique non-empty names,
// float32/float64 contiguous tensors, every parameter in exactly one group,
// matching gradient dtype and shape, and gradients free of NaN and ±Inf.
// It fills c.slots with the pairs that have a gradient.
//
// The NaN/Inf scan of the gradients lives here, once per step: it is what
// lets Step promise to write nothing when a gradient is not finite, in any
// loop, so a trainer need not scan the gradients itself before Step.
func (c *checker) check(who string, params []graph.NamedTensor, grads []*tensor.Dense, groups []Group) error {
	if len(params) != len(grads) {
		return fmt.Errorf("%s: %d parameters but %d gradients", who, len(params), len(grads))
	}
	if err := c.checkParams(who, params, groups); err != nil {
		return err
	}
	c.slots = c.slots[:0]
	for i, p := range params {
		g := grads[i]
		if g == nil {
			continue
		}
		if g.Dtype() != p.Value.Dtype() || !graph.SameShape(g.Shape(), p.Value.Shape()) {
			return fmt.Errorf("%s: gradient of %q is %v%v, want %v%v like the parameter",
				who, p.Name, g.Dtype(), g.Shape(), p.Value.Dtype(), p.Value.Shape())
		}
		if err := checkContiguous(g); err != nil {
			return fmt.Errorf("%s: gradient of %q: %w", who, p.Name, err)
		}
		c.slots = append(c.slots, slot{name: p.Name, p: p.Value, g: g, group: c.group[i]})
	}
	for _, s := range c.slots {
		if j := c.firstNonFinite(s.g); j >= 0 {
			return fmt.Errorf("%s: gradient of %q %v has %v at element %d (index %v); no parameter was updated: %w",
				who, s.name, s.g.Shape(), at(s.g, j), j, unravel(s.g.Shape(), j), graph.ErrNonFinite)
		}
	}
	return nil
}

// checkParams validates the parameters and their groups (also used by
// LoadState) and fills c.group.
func (c *checker) checkParams(who string, params []graph.NamedTensor, groups []Group) error {
	if c.index == nil {
		c.index = make(map[string]int, len(params))
	}
	clear(c.index)
	for i, p := range params {
		if p.Name == "" {
			return fmt.Errorf("%s: a parameter has an empty name; state is keyed by name", who)
		}
		if _, dup := c.index[p.Name]; dup {
			return fmt.Errorf("%s: parameter %q is listed twice", who, p.Name)
		}
		c.index[p.Name] = i
		if p.Value == nil {
			return fmt.Errorf("%s: parameter %q has no value", who, p.Name)
		}
		if dt := p.Value.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
			return fmt.Errorf("%s: parameter %q is %v, want float32 or float64", who, p.Name, dt)
		}
		if err := checkContiguous(p.Value); err != nil {
			return fmt.Errorf("%s: parameter %q: %w", who, p.Name, err)
		}
	}
	return c.assign(who, params, groups)
}

// assign sets c.group[i] to the group of params[i]: 0 for all without
// groups, else the one group that lists it.
func (c *checker) assign(who string, params []graph.NamedTensor, groups []Group) error {
	c.group = c.group[:0]
	for range params {
		c.group = append(c.group, -1)
	}
	if len(groups) == 0 {
		for i := range c.group {
			c.group[i] = 0
		}
		return nil
	}
	for gi, g := range groups {
		for _, name := range g.Params {
			i, ok := c.index[name]
			if !ok {
				return fmt.Errorf("%s: group %d lists %q, which is not among the %d parameters passed", who, gi, name, len(params))
			}
			switch prev := c.group[i]; {
			case prev == gi:
				return fmt.Errorf("%s: group %d lists parameter %q twice", who, gi, name)
			case prev >= 0:
				return fmt.Errorf("%s: parameter %q is in groups %d and %d; a parameter belongs to exactly one group", who, name, prev, gi)
			}
			c.group[i] = gi
		}
	}
	for i, p := range params {
		if c.group[i] < 0 {
			return fmt.Errorf("%s: parameter %q is in none of the %d groups; add it to one (with groups, they must cover every parameter passed)",
				who, p.Name, len(groups))
		}
	}
	return nil
}

// checkContiguous rejects views and transposes, whose backing slice is not
// the tensor's elements in order, and 0-d tensors (as graph.Param does).
func checkContiguous(t *tensor.Dense) error {
	if t.IsScalar() {
		return fmt.Errorf("scalar tensors are not supported; use shape (1)")
	}
	if t.RequiresIterator() || t.DataSize() != t.Shape().TotalSize() {
		return fmt.Errorf("tensor %v is a view or not contiguous; pass a materialized tensor", t.Shape())
	}
	return nil
}

func (c *checker) firstNonFinite(t *tensor.Dense) int {
	if t.Dtype() == tensor.Float32 {
		return c.f32.first(t.Float32s())
	}
	return c.f64.first(t.Float64s())
}

// finiteKernel finds the first NaN or ±Inf of a slice.
type finiteKernel[T float] struct {
	x   []T
	bad firstBad
}

func (k *finiteKernel[T]) first(x []T) int {
	k.x = x
	k.bad.reset()
	parallel.For(len(x), parallel.MinGrain, k)
	k.x = nil
	return k.bad.get()
}

func (k *finiteKernel[T]) Run(lo, hi int) {
	if j, ok := simdFirstNonFinite(k.x[lo:hi]); ok {
		if j >= 0 {
			k.bad.record(lo + j)
		}
		return
	}
	if allFinite(k.x[lo:hi]) { // the common case, without a branch per element
		return
	}
	for i, v := range k.x[lo:hi] {
		if v-v != 0 { // NaN and ±Inf only
			k.bad.record(lo + i)
			return
		}
	}
}

// allFinite reports whether x holds no NaN or ±Inf. It looks only at the
// exponent bits: (e & mask) + one sets the bit above the exponent exactly
// when all exponent bits are ones, so OR-ing that over the slice tests every
// element without a branch.
func allFinite[T float](x []T) bool {
	if len(x) == 0 {
		return true
	}
	switch v := any(x).(type) {
	case []float32:
		var acc uint32
		for _, b := range unsafe.Slice((*uint32)(unsafe.Pointer(&v[0])), len(v)) {
			acc |= (b & 0x7f800000) + 0x00800000
		}
		return acc&0x80000000 == 0
	case []float64:
		var acc uint64
		for _, b := range unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), len(v)) {
			acc |= (b & 0x7ff0000000000000) + 0x0010000000000000
		}
		return acc&0x8000000000000000 == 0
	}
	return false
}

// at returns element j of a float tensor as float64.
func at(t *tensor.Dense, j int) float64 {
	if t.Dtype() == tensor.Float32 {
		return float64(t.Float32s()[j])
	}
	return t.Float64s()[j]
}

// unravel turns a flat row-major index into coordinates.
func unravel(shape tensor.Shape, j int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = j % shape[d]
		j /= shape[d]
	}
	return idx
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// checkRate validates a learning rate (PyTorch also rejects lr < 0; NaN
// slips through its check, not this one). Like checkNonNeg, its error is
// to be prefixed with the optimizer and group.
func checkRate(lr float64) error {
	if !finite(lr) || lr < 0 {
		return fmt.Errorf("learning rate %v, want a finite value ≥ 0", lr)
	}
	return nil
}

// checkNonNeg validates a finite hyperparameter that must be ≥ 0.
func checkNonNeg(name string, v float64) error {
	if !finite(v) || v < 0 {
		return fmt.Errorf("%s %v, want a finite value ≥ 0", name, v)
	}
	return nil
}
