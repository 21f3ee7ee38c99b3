package probe_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// Methods that return an error give one, naming the method, on a nil
// receiver, a nil stream or a step count below 1; accessors of a nil value
// return zero values. None panics.
func TestNilAndEmptyArgumentsAreErrors(t *testing.T) {
	var (
		m *probe.Moments
		s *probe.Shadow
		n *probe.Net
		u *probe.Units
		w *probe.Watch
	)
	real := linearNet(t, tensor.Float64, 2, 1, 1, []float64{0})
	for _, c := range []struct {
		want string
		f    func() error
	}{
		{"probe.Moments.Add", func() error { return m.Add(nil) }},
		{"probe.Moments.Total", func() error { _, err := m.Total(-1); return err }},
		{"probe.Shadow.Step", func() error { return s.Step(nil) }},
		{"probe.Net.Grads", func() error { _, err := n.Grads(nil, nil); return err }},
		{"probe.Net.Run", func() error { _, err := n.Run(nil, 1, nil, nil); return err }},
		{"probe.Net.Accuracy", func() error { _, err := n.Accuracy(nil); return err }},
		{"probe.Net.Run: stream nil = true", func() error { _, err := real.Run(nil, 1, nil, nil); return err }},
		{"probe.Net.Run: stream nil = false and -1 steps", func() error {
			_, err := real.Run(func() (*tensor.Dense, *tensor.Dense, error) { return nil, nil, nil }, -1, nil, nil)
			return err
		}},
		{"probe.LoaderStream", func() error { _, _, err := probe.LoaderStream(nil)(); return err }},
		{"probe.Units.Observe", func() error { return u.Observe(0, nil, 1) }},
		{"probe.Units.ObserveLoader", func() error { return u.ObserveLoader(nil, nil, nil, nil) }},
		{"probe.Watch.Add", func() error { _, err := w.Add(nil); return err }},
		{"probe.Watch.WatchUnits", func() error { return w.WatchUnits(nil, nil, nil, 1) }},
		{"probe.Watch.Summary", func() error { _, err := w.Summary(); return err }},
		{"probe.Watch.Compare", func() error { _, err := w.Compare(0, -1); return err }},
	} {
		if err := noPanic(c.f); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("got %v, want an error starting %q", err, c.want)
		}
	}
	if err := noPanic(func() error {
		if m.N() != 0 || m.Blocks() != 0 || m.Names() != nil || m.Mean(0) != nil || m.Var(0) != nil ||
			u.Layers() != 0 || u.Examples(0) != 0 || u.Width(0) != 0 || u.Dead(0, 0) != nil {
			return fmt.Errorf("a nil accessor returned a non-zero value")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}
