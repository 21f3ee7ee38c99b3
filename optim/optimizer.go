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
	// whose .grad is None in PyTorch: no decay, no state change.
	Step(params []graph.NamedTensor, grads []*tensor.Dense) error
	// LR returns the learning rate used by the next Step.
	LR() float64
	// SetLR sets the learning rate used by the next Step (a schedule calls
	// it every step). Step rejects a negative or non-finite rate.
	SetLR(lr float64)
	// State returns the optimizer's state as named tensors for checkpoints,
	// named after the parameter: "<param>.momentum_buffer" (SGD),
	// "<param>.step", "<param>.exp_avg", "<param>.exp_avg_sq" (Adam,
	// AdamW), matching the keys of PyTorch's optimizer state. The tensors
	// are the live state, not copies: the next Step changes them.
	State() []graph.NamedTensor
	// LoadState replaces the state with copies of tensors produced by State
	// for the same parameters. For each parameter either all of its keys are
	// present or none (then it starts fresh, as before its first step).
	// Missing or extra names, shape, dtype and non-finite values are
	// errors, and on error the state is unchanged.
	LoadState(params []graph.NamedTensor, state []graph.NamedTensor) error
}

// ErrNonFiniteParam is wrapped by the error Step returns when the update
// produced NaN or ±Inf in a parameter (from finite gradients: a learning
// rate too large, or a parameter that was already non-finite). Unlike a
// non-finite gradient, which is reported before anything is written (and
// wraps graph.ErrNonFinite), the step has been applied.
var ErrNonFiniteParam = errors.New("non-finite parameter after the update")

type float interface{ ~float32 | ~float64 }

// slot is one (parameter, gradient) pair of a Step, after validation.
type slot struct {
	name string
	p, g *tensor.Dense
}

// checker validates the arguments of Step. It is reused across steps so
// that validating allocates nothing once the first step is done.
type checker struct {
	seen  map[string]struct{}
	slots []slot
	f32   finiteKernel[float32]
	f64   finiteKernel[float64]
}

// check validates params and grads: equal lengths, unique non-empty names,
// float32/float64 contiguous tensors, matching gradient dtype and shape,
// and gradients free of NaN and ±Inf. It fills c.slots with the pairs that
// have a gradient.
func (c *checker) check(who string, params []graph.NamedTensor, grads []*tensor.Dense) error {
	if len(params) != len(grads) {
		return fmt.Errorf("%s: %d parameters but %d gradients", who, len(params), len(grads))
	}
	if err := c.checkParams(who, params); err != nil {
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
		c.slots = append(c.slots, slot{name: p.Name, p: p.Value, g: g})
	}
	for _, s := range c.slots {
		if j := c.firstNonFinite(s.g); j >= 0 {
			return fmt.Errorf("%s: gradient of %q %v has %v at element %d (index %v); no parameter was updated: %w",
				who, s.name, s.g.Shape(), at(s.g, j), j, unravel(s.g.Shape(), j), graph.ErrNonFinite)
		}
	}
	return nil
}

// checkParams validates the parameters alone (also used by LoadState).
func (c *checker) checkParams(who string, params []graph.NamedTensor) error {
	if c.seen == nil {
		c.seen = make(map[string]struct{}, len(params))
	}
	clear(c.seen)
	for _, p := range params {
		if p.Name == "" {
			return fmt.Errorf("%s: a parameter has an empty name; state is keyed by name", who)
		}
		if _, dup := c.seen[p.Name]; dup {
			return fmt.Errorf("%s: parameter %q is listed twice", who, p.Name)
		}
		c.seen[p.Name] = struct{}{}
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
// slips through its check, not this one).
func checkRate(who string, lr float64) error {
	if !finite(lr) || lr < 0 {
		return fmt.Errorf("%s: learning rate %v, want a finite value ≥ 0", who, lr)
	}
	return nil
}

// checkNonNeg validates a finite hyperparameter that must be ≥ 0.
func checkNonNeg(who, name string, v float64) error {
	if !finite(v) || v < 0 {
		return fmt.Errorf("%s: %s %v, want a finite value ≥ 0", who, name, v)
	}
	return nil
}
