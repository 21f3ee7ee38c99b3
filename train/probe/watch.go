package probe

// Watch: shadow momentum buffers and moments for a whole stream of
// gradients, with a burn-in before anything is recorded, and optionally
// the network's own f'(z) statistics; Summary gives everything measured
// over the window.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Buffer names one momentum buffer by its form and β.
type Buffer struct {
	Form Form
	Beta float64
}

// Watch feeds every gradient of a stream to shadow momentum buffers and,
// once burn steps have passed (see BurnIn), records the moments of the
// gradients and of each buffer over the steps that follow, for Compare.
type Watch struct {
	buffers []Buffer
	burn, n int
	grads   *Moments
	shadows []*Shadow
	bufs    []*Moments

	units     *Units // see WatchUnits
	m         *graph.Machine
	pre       []*G.Node
	unitSteps int
}

// NewWatch starts a watch over parameters shaped like params, with moments
// grouped in blocks of blockLen recorded steps (0: no blocks, no standard
// errors) and the given buffers (none: gradients only).
func NewWatch(params []graph.NamedTensor, blockLen, burn int, buffers ...Buffer) (*Watch, error) {
	if burn < 0 {
		return nil, fmt.Errorf("probe.NewWatch: burn-in %d, want ≥ 0", burn)
	}
	w := &Watch{buffers: append([]Buffer(nil), buffers...), burn: burn}
	var err error
	if w.grads, err = NewMoments(params, blockLen); err != nil {
		return nil, fmt.Errorf("probe.NewWatch: %w", err)
	}
	for _, b := range buffers {
		s, err := NewShadow(b.Form, b.Beta, params)
		if err != nil {
			return nil, fmt.Errorf("probe.NewWatch: %w", err)
		}
		m, _ := NewMoments(params, blockLen)
		w.shadows, w.bufs = append(w.shadows, s), append(w.bufs, m)
	}
	return w, nil
}

// Add feeds one step's gradients (one per parameter) to every buffer and,
// after the burn-in, records them and the buffers. It reports whether the
// step was recorded.
func (w *Watch) Add(grads []*tensor.Dense) (recorded bool, err error) {
	if w == nil {
		return false, fmt.Errorf("probe.Watch.Add: nil Watch (use NewWatch)")
	}
	for _, s := range w.shadows {
		if err := s.Step(grads); err != nil {
			return false, err
		}
	}
	w.n++
	if w.n <= w.burn {
		return false, nil
	}
	if err := w.grads.Add(grads); err != nil {
		return false, err
	}
	for i, s := range w.shadows {
		if err := w.bufs[i].Add(s.Buffers()); err != nil {
			return false, err
		}
	}
	if w.units != nil && w.grads.N() <= w.unitSteps {
		for l, n := range w.pre {
			v, err := w.m.Value(n)
			if err != nil {
				return true, fmt.Errorf("probe.Watch.Add: %w", err)
			}
			d, ok := v.(*tensor.Dense)
			if !ok {
				return true, fmt.Errorf("probe.Watch.Add: %q is a %T, want a tensor", n.Name(), v)
			}
			if err := w.units.Observe(l, d, d.Shape()[0]); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// WatchUnits makes the watch also record the network's f'(z) on its first
// steps recorded steps: Add then reads the hidden pre-activations pre
// (kept with graph.Keep, e.g. nn.MLP.Pre) from m's last run into u, after
// u.Reset(). Call Add right after running m on the batch whose gradients
// it is given. Summary reports the averages as UnitMean and UnitMeanSq:
// the network's counterparts of E[f'(X)] and E[f'(X)²], X ~ N(0, 1).
func (w *Watch) WatchUnits(u *Units, m *graph.Machine, pre []*G.Node, steps int) error {
	if w == nil {
		return fmt.Errorf("probe.Watch.WatchUnits: nil Watch (use NewWatch)")
	}
	if u == nil || m == nil {
		return fmt.Errorf("probe.Watch.WatchUnits: nil units or machine")
	}
	if len(pre) != u.Layers() {
		return fmt.Errorf("probe.Watch.WatchUnits: %d pre-activation nodes for %d layers", len(pre), u.Layers())
	}
	u.Reset()
	w.units, w.m, w.pre, w.unitSteps = u, m, append([]*G.Node(nil), pre...), steps
	return nil
}

// Summary is what a Watch measured over its recorded steps.
type Summary struct {
	Name    string   // the Phase's, when Net.Measure made it
	Steps   int      // recorded steps (after the burn-in)
	Tensors []string // the parameters' names
	// Grad holds the gradient totals of each parameter tensor, in order,
	// then of all tensors together (last).
	Grad []Totals
	// Buffers compares each watched buffer, in order, with the gradients
	// over all tensors.
	Buffers []Comparison
	// UnitMean and UnitMeanSq are the mean of f'(z) and of f'(z)² over the
	// hidden units and the steps WatchUnits observed (NaN without it).
	UnitMean, UnitMeanSq float64
}

// All returns the gradient totals over all tensors (the last of Grad).
func (s Summary) All() Totals {
	if len(s.Grad) == 0 {
		return Totals{}
	}
	return s.Grad[len(s.Grad)-1]
}

// Summary returns the totals, comparisons and unit statistics so far; it
// needs at least 2 recorded steps.
func (w *Watch) Summary() (Summary, error) {
	if w == nil {
		return Summary{}, fmt.Errorf("probe.Watch.Summary: nil Watch (use NewWatch)")
	}
	s := Summary{Steps: w.grads.N(), Tensors: w.grads.Names(), UnitMean: math.NaN(), UnitMeanSq: math.NaN()}
	for i := 0; i <= len(s.Tensors); i++ {
		k := i
		if i == len(s.Tensors) {
			k = -1
		}
		t, err := w.grads.Total(k)
		if err != nil {
			return s, fmt.Errorf("probe.Watch.Summary: %w", err)
		}
		s.Grad = append(s.Grad, t)
	}
	for i := range w.bufs {
		c, err := w.Compare(i, -1)
		if err != nil {
			return s, err
		}
		s.Buffers = append(s.Buffers, c)
	}
	if w.units != nil {
		s.UnitMean, s.UnitMeanSq = w.units.DerivMoments()
	}
	return s, nil
}

// Steps returns the number of steps fed so far, burn-in included.
func (w *Watch) Steps() int { return w.n }

// Grads returns the moments of the recorded gradients.
func (w *Watch) Grads() *Moments { return w.grads }

// Buffers returns the watched buffers, in order.
func (w *Watch) Buffers() []Buffer { return append([]Buffer(nil), w.buffers...) }

// BufferMoments returns the moments of buffer i (nil if out of range).
func (w *Watch) BufferMoments(i int) *Moments {
	if i < 0 || i >= len(w.bufs) {
		return nil
	}
	return w.bufs[i]
}

// Compare compares buffer i with the gradients over parameter tensor t
// (−1: all tensors); see the package function Compare.
func (w *Watch) Compare(i, t int) (Comparison, error) {
	if w == nil {
		return Comparison{}, fmt.Errorf("probe.Watch.Compare: nil Watch (use NewWatch)")
	}
	if i < 0 || i >= len(w.bufs) {
		return Comparison{}, fmt.Errorf("probe.Watch.Compare: buffer %d, want 0 ≤ i < %d", i, len(w.bufs))
	}
	return Compare(w.grads, w.bufs[i], t, w.buffers[i].Form, w.buffers[i].Beta)
}
