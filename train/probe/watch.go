package probe

// Watch: shadow momentum buffers and moments for a whole stream of
// gradients, with a burn-in before anything is recorded.

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
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
	return true, nil
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
	if i < 0 || i >= len(w.bufs) {
		return Comparison{}, fmt.Errorf("probe.Watch.Compare: buffer %d, want 0 ≤ i < %d", i, len(w.bufs))
	}
	return Compare(w.grads, w.bufs[i], t, w.buffers[i].Form, w.buffers[i].Beta)
}
