package optim

// Per-parameter optimizer state keyed by parameter name, and its export and
// import as named tensors in PyTorch's state_dict vocabulary.

import (
	"fmt"
	"math"
	"strings"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// stateKey describes one per-parameter state tensor.
type stateKey struct {
	name string // suffix after "<param>."
	step bool   // a float64 (1) step counter rather than a tensor like the parameter
	sq   bool   // a running average of squares: must be ≥ 0
}

// paramState is one parameter's state. t is indexed like the optimizer's
// key list; a nil entry is a tensor not (yet) allocated.
type paramState struct {
	name  string
	dtype tensor.Dtype
	shape tensor.Shape
	t     []*tensor.Dense
}

// stateSet holds the states of all parameters seen so far, in the order
// they were first seen.
type stateSet struct {
	byName map[string]*paramState
	order  []*paramState
}

func (s *stateSet) get(name string) *paramState { return s.byName[name] }

// add creates an empty state for parameter p with room for n keys.
func (s *stateSet) add(name string, p *tensor.Dense, n int) *paramState {
	if s.byName == nil {
		s.byName = map[string]*paramState{}
	}
	ps := &paramState{name: name, dtype: p.Dtype(), shape: p.Shape().Clone(), t: make([]*tensor.Dense, n)}
	s.byName[name] = ps
	s.order = append(s.order, ps)
	return ps
}

// checkMatch reports a parameter whose dtype or shape differs from the one
// its state was created for.
func (ps *paramState) checkMatch(who string, p *tensor.Dense) error {
	if p.Dtype() != ps.dtype || !graph.SameShape(p.Shape(), ps.shape) {
		return fmt.Errorf("%s: parameter %q is %v%v but its state was made for %v%v; use LoadState or a new optimizer after changing a parameter",
			who, ps.name, p.Dtype(), p.Shape(), ps.dtype, ps.shape)
	}
	return nil
}

// list returns the live state tensors, "<param>.<key>", parameter by
// parameter in first-seen order and key by key in keys order.
func (s *stateSet) list(keys []stateKey) []graph.NamedTensor {
	var out []graph.NamedTensor
	for _, ps := range s.order {
		for j, k := range keys {
			if ps.t[j] != nil {
				out = append(out, graph.NamedTensor{Name: ps.name + "." + k.name, Value: ps.t[j]})
			}
		}
	}
	return out
}

// newTensor returns a zero tensor of the given dtype and shape.
func newTensor(dt tensor.Dtype, shape tensor.Shape) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape.Clone()...))
}

// newStep returns a step counter holding 0.
func newStep() *tensor.Dense { return newTensor(tensor.Float64, tensor.Shape{1}) }

// loadState builds a state set from named tensors, for the parameters and
// groups checked by c. want(i, j) says whether key j is expected for
// params[i] under its group's settings; a parameter has all of its wanted
// keys or none. Tensors are copied, and nothing outside the returned set is
// changed: the caller installs it only when there is no error.
func loadState(who string, c *checker, groups []Group, keys []stateKey, want func(param, key int) bool, params, state []graph.NamedTensor) (stateSet, error) {
	var s stateSet
	if err := c.checkParams(who, params, groups); err != nil {
		return s, err
	}
	given := make(map[string]*tensor.Dense, len(state))
	for _, nt := range state {
		if _, dup := given[nt.Name]; dup {
			return s, fmt.Errorf("%s: LoadState: state %q is listed twice", who, nt.Name)
		}
		if nt.Value == nil {
			return s, fmt.Errorf("%s: LoadState: state %q has no value", who, nt.Name)
		}
		given[nt.Name] = nt.Value
	}
	used := make(map[string]bool, len(state))
	for i, p := range params {
		var found, missing []string
		for j, k := range keys {
			if want(i, j) {
				if _, ok := given[p.Name+"."+k.name]; ok {
					found = append(found, k.name)
				} else {
					missing = append(missing, p.Name+"."+k.name)
				}
			}
		}
		if len(found) == 0 {
			continue // fresh parameter: no state yet
		}
		if len(missing) > 0 {
			return stateSet{}, fmt.Errorf("%s: LoadState: parameter %q has state %v but %v is missing", who, p.Name, found, missing)
		}
		ps := s.add(p.Name, p.Value, len(keys))
		for j, k := range keys {
			if !want(i, j) {
				continue
			}
			name := p.Name + "." + k.name
			used[name] = true
			t, err := loadTensor(k, given[name], ps)
			if err != nil {
				return stateSet{}, fmt.Errorf("%s: LoadState: %q: %w", who, name, err)
			}
			ps.t[j] = t
		}
	}
	for _, nt := range state {
		if used[nt.Name] {
			continue
		}
		for i, p := range params {
			for _, k := range keys {
				if nt.Name == p.Name+"."+k.name {
					return stateSet{}, fmt.Errorf("%s: LoadState: state %q is not used with the settings of %q (keys %v)",
						who, nt.Name, p.Name, keyNames(keys, func(j int) bool { return want(i, j) }))
				}
			}
		}
		// Not a key of this optimizer (those returned above): another's?
		if o, ok := stateOwner(params, nt.Name); ok {
			return stateSet{}, fmt.Errorf("%s: LoadState: state %q is %s state, not this optimizer's (keys %v): it was saved by another optimizer; load it into %s",
				who, nt.Name, o.whose, keyNames(keys, func(int) bool { return true }), o.who)
		}
		return stateSet{}, fmt.Errorf("%s: LoadState: state %q matches no parameter and key of this optimizer (keys %v)",
			who, nt.Name, keyNames(keys, func(int) bool { return true }))
	}
	return s, nil
}

// owner is an optimizer of this package as an error message names it.
type owner struct {
	who, whose string
	keys       []stateKey
}

// stateOwners are the package's optimizers by the state keys they save.
var stateOwners = []owner{
	{"optim.Adam or optim.AdamW", "optim.Adam's or optim.AdamW's", adamKeys},
	{"optim.SGD", "optim.SGD's", sgdKeys},
}

// stateOwner returns the optimizer whose state the name "<param>.<key>"
// is, for a parameter of params.
func stateOwner(params []graph.NamedTensor, name string) (owner, bool) {
	for _, p := range params {
		key, ok := strings.CutPrefix(name, p.Name+".")
		if !ok {
			continue
		}
		for _, o := range stateOwners {
			for _, k := range o.keys {
				if k.name == key {
					return o, true
				}
			}
		}
	}
	return owner{}, false
}

func keyNames(keys []stateKey, want func(key int) bool) []string {
	var out []string
	for j, k := range keys {
		if want(j) {
			out = append(out, k.name)
		}
	}
	return out
}

// loadTensor checks v against the key's expectations and returns a copy.
func loadTensor(k stateKey, v *tensor.Dense, ps *paramState) (*tensor.Dense, error) {
	if err := checkContiguous(v); err != nil {
		return nil, err
	}
	if k.step {
		if v.Dtype() != tensor.Float64 || !graph.SameShape(v.Shape(), tensor.Shape{1}) {
			return nil, fmt.Errorf("step counter is %v%v, want float64(1)", v.Dtype(), v.Shape())
		}
		n := v.Float64s()[0]
		if !(n >= 0 && n <= 1<<53 && n == math.Trunc(n)) {
			return nil, fmt.Errorf("step counter is %v, want a whole number ≥ 0", n)
		}
		t := newStep()
		t.Float64s()[0] = n
		return t, nil
	}
	if v.Dtype() != ps.dtype || !graph.SameShape(v.Shape(), ps.shape) {
		return nil, fmt.Errorf("is %v%v, want %v%v like the parameter", v.Dtype(), v.Shape(), ps.dtype, ps.shape)
	}
	t := newTensor(ps.dtype, ps.shape)
	for i := 0; i < v.DataSize(); i++ {
		x := at(v, i)
		if !finite(x) || (k.sq && x < 0) {
			want := "finite"
			if k.sq {
				want = "finite and ≥ 0"
			}
			return nil, fmt.Errorf("element %d (index %v) is %v, want %s", i, unravel(v.Shape(), i), x, want)
		}
	}
	if ps.dtype == tensor.Float32 {
		copy(t.Float32s(), v.Float32s())
	} else {
		copy(t.Float64s(), v.Float64s())
	}
	return t, nil
}
