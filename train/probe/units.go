package probe

// Dead units: per-unit statistics of f'(z) over a fixed set of examples,
// read from kept pre-activation tensors (mlp.Pre with graph.Keep).

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DefaultDeadTol is the tolerance Units.Dead is usually called with: a unit
// whose |f'(z)| never exceeds 1e-3 on the probe examples passes back at
// most a thousandth of the gradient a unit in its linear regime passes
// (f' ≈ 1 there for every activation of package ops). For ReLU any tol in
// [0, 1) counts the same units (f' is 0 or 1); the smooth activations fall
// below 1e-3 for good at different depths: GELU for z < −3.81, ELU and
// Softplus for z < −6.91, SiLU for z < −8.99 (see the package
// documentation).
const DefaultDeadTol = 1e-3

// Units accumulates, for every unit of some layers, statistics of f'(z) and
// z over the examples it is shown: max |f'(z)| (which decides deadness at
// any tolerance), max z, and the sums of f'(z) and f'(z)². f' is the
// float64 reference a.Deriv evaluated at each pre-activation (float32
// values are widened first), so a tolerance of 0 counts only units whose
// mathematical derivative is exactly 0 on every example.
type Units struct {
	act    activation.Activation
	layers []unitLayer
}

type unitLayer struct {
	maxAbsD, maxZ, sumD, sumD2 []float64
	rows                       int
}

// NewUnits starts statistics for layers of the given widths under
// activation a.
func NewUnits(a activation.Activation, widths ...int) (*Units, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("probe.NewUnits: %w", err)
	}
	if len(widths) == 0 {
		return nil, fmt.Errorf("probe.NewUnits: no layers")
	}
	u := &Units{act: a, layers: make([]unitLayer, len(widths))}
	for i, w := range widths {
		if w <= 0 {
			return nil, fmt.Errorf("probe.NewUnits: layer %d has width %d, want > 0", i, w)
		}
		u.layers[i] = unitLayer{maxAbsD: make([]float64, w), maxZ: make([]float64, w), sumD: make([]float64, w), sumD2: make([]float64, w)}
	}
	u.Reset()
	return u, nil
}

// Activation returns the activation whose derivative is measured.
func (u *Units) Activation() activation.Activation { return u.act }

// Layers returns the number of layers (0 for nil Units).
func (u *Units) Layers() int {
	if u == nil {
		return 0
	}
	return len(u.layers)
}

// Reset forgets every observation (before the next probe of the same set).
func (u *Units) Reset() {
	for i := range u.layers {
		l := &u.layers[i]
		for j := range l.maxAbsD {
			l.maxAbsD[j], l.maxZ[j], l.sumD[j], l.sumD2[j] = 0, math.Inf(-1), 0, 0
		}
		l.rows = 0
	}
}

// Observe adds the first rows rows of pre (rows × width pre-activations of
// layer, float32 or float64) to the statistics. Rows beyond rows (the
// padding of a datasets.Loader's last batch) are ignored. A NaN or ±Inf
// pre-activation is an error naming its position, and then nothing is
// added.
func (u *Units) Observe(layer int, pre *tensor.Dense, rows int) error {
	if u == nil {
		return fmt.Errorf("probe.Units.Observe: nil Units (use NewUnits)")
	}
	if layer < 0 || layer >= len(u.layers) {
		return fmt.Errorf("probe.Units.Observe: layer %d, want 0 ≤ layer < %d", layer, len(u.layers))
	}
	l := &u.layers[layer]
	w := len(l.maxAbsD)
	if pre == nil || pre.Dims() != 2 || pre.Shape()[1] != w {
		var shape tensor.Shape
		if pre != nil {
			shape = pre.Shape()
		}
		return fmt.Errorf("probe.Units.Observe: layer %d: pre-activations have shape %v, want (rows, %d)", layer, shape, w)
	}
	if rows < 0 || rows > pre.Shape()[0] {
		return fmt.Errorf("probe.Units.Observe: layer %d: %d rows requested of a tensor with %d", layer, rows, pre.Shape()[0])
	}
	z, err := float64s(pre, rows*w)
	if err != nil {
		return fmt.Errorf("probe.Units.Observe: layer %d: %w", layer, err)
	}
	for i, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("probe.Units.Observe: layer %d: pre-activation of unit %d in row %d is %v", layer, i%w, i/w, v)
		}
	}
	for i, v := range z {
		j := i % w
		d := u.act.Deriv(v)
		l.maxAbsD[j] = math.Max(l.maxAbsD[j], math.Abs(d))
		l.maxZ[j] = math.Max(l.maxZ[j], v)
		l.sumD[j] += d
		l.sumD2[j] += d * d
	}
	l.rows += rows
	return nil
}

// ObserveLoader runs the forward machine m over every batch of l (epoch 0),
// binding each batch's X to input, and observes the kept nodes pre[i] as
// layer i (only each batch's Size real rows). m must have been compiled
// with graph.Keep(pre...) on a graph in evaluation mode (SetTraining(false))
// if it has dropout. It resets nothing: call Reset first for a fresh probe.
func (u *Units) ObserveLoader(m *graph.Machine, input *G.Node, pre []*G.Node, l *datasets.Loader) error {
	if u == nil {
		return fmt.Errorf("probe.Units.ObserveLoader: nil Units (use NewUnits)")
	}
	if m == nil || input == nil || l == nil {
		return fmt.Errorf("probe.Units.ObserveLoader: nil machine, input or loader")
	}
	if len(pre) != len(u.layers) {
		return fmt.Errorf("probe.Units.ObserveLoader: %d pre-activation nodes for %d layers", len(pre), len(u.layers))
	}
	for i := 0; i < l.NumBatches(); i++ {
		b, err := l.Batch(0, i)
		if err != nil {
			return fmt.Errorf("probe.Units.ObserveLoader: %w", err)
		}
		if err := m.Set(input, b.X); err != nil {
			return fmt.Errorf("probe.Units.ObserveLoader: %w", err)
		}
		if err := m.Run(); err != nil {
			return fmt.Errorf("probe.Units.ObserveLoader: batch %d: %w", i, err)
		}
		for k, n := range pre {
			v, err := m.Value(n)
			if err != nil {
				return fmt.Errorf("probe.Units.ObserveLoader: %w", err)
			}
			d, ok := v.(*tensor.Dense)
			if !ok {
				return fmt.Errorf("probe.Units.ObserveLoader: %q is a %T, want a tensor", n.Name(), v)
			}
			if err := u.Observe(k, d, b.Size); err != nil {
				return err
			}
		}
	}
	return nil
}

// Examples returns the number of rows observed for layer (0 if layer is out
// of range).
func (u *Units) Examples(layer int) int {
	if u == nil || layer < 0 || layer >= len(u.layers) {
		return 0
	}
	return u.layers[layer].rows
}

// Width returns the number of units of layer (0 if out of range).
func (u *Units) Width(layer int) int {
	if u == nil || layer < 0 || layer >= len(u.layers) {
		return 0
	}
	return len(u.layers[layer].maxAbsD)
}

// Dead reports for every unit of layer whether |f'(z)| ≤ tol on every
// observed example. With no examples observed no unit is dead.
func (u *Units) Dead(layer int, tol float64) []bool {
	if u == nil || layer < 0 || layer >= len(u.layers) {
		return nil
	}
	l := u.layers[layer]
	out := make([]bool, len(l.maxAbsD))
	if l.rows == 0 {
		return out
	}
	for j, m := range l.maxAbsD {
		out[j] = m <= tol
	}
	return out
}

// DeadCount returns the number of dead units in layer at tolerance tol.
func (u *Units) DeadCount(layer int, tol float64) int {
	n := 0
	for _, d := range u.Dead(layer, tol) {
		if d {
			n++
		}
	}
	return n
}

// DeadFraction returns the dead units of all layers at tolerance tol as a
// fraction of all units.
func (u *Units) DeadFraction(tol float64) float64 {
	dead, all := 0, 0
	for i := range u.layers {
		dead += u.DeadCount(i, tol)
		all += u.Width(i)
	}
	return float64(dead) / float64(all)
}

// MaxAbsDeriv returns a copy of max |f'(z)| over the examples, per unit.
func (u *Units) MaxAbsDeriv(layer int) []float64 {
	if u == nil || layer < 0 || layer >= len(u.layers) {
		return nil
	}
	return append([]float64(nil), u.layers[layer].maxAbsD...)
}

// MaxPre returns a copy of max z over the examples, per unit (−Inf before
// any observation).
func (u *Units) MaxPre(layer int) []float64 {
	if u == nil || layer < 0 || layer >= len(u.layers) {
		return nil
	}
	return append([]float64(nil), u.layers[layer].maxZ...)
}

// DerivMoments returns the mean of f'(z) and of f'(z)² over all units of
// all layers and all observed examples (NaN before any observation). They
// are the network's counterparts of E[f'(X)] and E[f'(X)²] for
// X ~ N(0, 1): the same averages over the pre-activations the network
// actually has.
func (u *Units) DerivMoments() (mean, meanSq float64) {
	var s, s2, n float64
	for _, l := range u.layers {
		for j := range l.sumD {
			s += l.sumD[j]
			s2 += l.sumD2[j]
		}
		n += float64(l.rows * len(l.sumD))
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return s / n, s2 / n
}

// float64s returns the first n elements of a float32 or float64 tensor as
// float64.
func float64s(t *tensor.Dense, n int) ([]float64, error) {
	switch d := t.Data().(type) {
	case []float64:
		if len(d) < n {
			return nil, fmt.Errorf("tensor holds %d values, want %d", len(d), n)
		}
		return d[:n], nil
	case []float32:
		if len(d) < n {
			return nil, fmt.Errorf("tensor holds %d values, want %d", len(d), n)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(d[i])
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor of %v, want float32 or float64", t.Dtype())
}
