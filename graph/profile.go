package graph

// Per-op timing of a Machine's runs, like PyTorch's profiler table: which
// ops a training step spends its time in.

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// OpTime is the time a Machine's runs spent in one op of its graph
// (Machine.Profile).
type OpTime struct {
	Node  string        // the node's name, e.g. "ffn.up.w·x"
	Op    string        // the op, as it prints
	Calls int           // how many runs executed it
	Total time.Duration // wall time over those runs
}

// Profile starts (on) or stops recording the wall time of each op of Run.
// Starting clears what was recorded; stopping keeps it for Profiled. Times
// are the caller's wall clock around each op (its own parallel loops
// included), so they add up to about the time of Run; a profiled Run
// allocates nothing more.
func (m *Machine) Profile(on bool) error {
	if err := m.check(); err != nil {
		return err
	}
	e := m.exec
	if !on {
		e.profiling = false
		return nil
	}
	e.spent, e.calls, e.profiling = make([]time.Duration, len(e.steps)), make([]int, len(e.steps)), true
	return nil
}

// Profiled returns the times recorded since Profile(true), one per op that
// ran, most time first (ties in graph order).
func (m *Machine) Profiled() ([]OpTime, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	e := m.exec
	if e.spent == nil {
		return nil, fmt.Errorf("graph: Profiled before Profile(true)")
	}
	var ts []OpTime
	for i, s := range e.steps {
		if e.calls[i] > 0 {
			ts = append(ts, OpTime{Node: s.node.Name(), Op: fmt.Sprint(s.op), Calls: e.calls[i], Total: e.spent[i]})
		}
	}
	slices.SortStableFunc(ts, func(a, b OpTime) int { return cmp.Compare(b.Total, a.Total) })
	return ts, nil
}
