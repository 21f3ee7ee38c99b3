package probe

// Dead units of an MLP while it trains: a second forward pass of the same
// weights on a fixed probe set, run whenever the program wants a count,
// remembering which units were ever dead.

import (
	"fmt"
	"math"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
)

// DeadProbe counts the dead hidden units of an MLP on a fixed set of
// examples (Units, at tolerance Tol), and which units were dead at some
// probe.
type DeadProbe struct {
	Units *Units
	Tol   float64
	m     *graph.Machine
	input *G.Node
	pre   []*G.Node
	l     *datasets.Loader
	ever  [][]bool
}

// NewDeadProbe adds to g a forward pass of mlp on all of set in one batch
// (input "probe_x"), compiled on its own with the hidden pre-activations
// kept (graph.Keep), so that probing changes neither the parameters nor
// the training machine. Build it after the training forward pass: Forward
// replaces mlp.Pre.
func NewDeadProbe(g *graph.Graph, mlp *nn.MLP, set *datasets.Dataset, tol float64) (*DeadProbe, error) {
	if g == nil || mlp == nil || set == nil || set.Len() == 0 {
		return nil, fmt.Errorf("probe.NewDeadProbe: want a graph, an MLP and a non-empty probe set")
	}
	x, err := g.Input("probe_x", set.Len(), set.Features)
	if err != nil {
		return nil, err
	}
	if _, err := mlp.Forward(x); err != nil {
		return nil, err
	}
	p := &DeadProbe{Tol: tol, input: x, pre: slices.Clone(mlp.Pre), ever: make([][]bool, len(mlp.Config.Hidden))}
	if p.m, err = g.Compile(nil, graph.Keep(p.pre...)); err != nil {
		return nil, err
	}
	if p.l, err = datasets.NewLoader(set, datasets.LoaderConfig{BatchSize: set.Len(), Dtype: g.Dtype()}); err != nil {
		return nil, err
	}
	if p.Units, err = NewUnits(mlp.Config.Activation, mlp.Config.Hidden...); err != nil {
		return nil, err
	}
	for l, w := range mlp.Config.Hidden {
		p.ever[l] = make([]bool, w)
	}
	return p, nil
}

// Observe probes the current weights: Units then holds this probe's
// statistics alone, and the units dead now count as ever dead.
func (p *DeadProbe) Observe() error {
	p.Units.Reset()
	if err := p.Units.ObserveLoader(p.m, p.input, p.pre, p.l); err != nil {
		return err
	}
	for l := range p.ever {
		for j, d := range p.Units.Dead(l, p.Tol) {
			p.ever[l][j] = p.ever[l][j] || d
		}
	}
	return nil
}

// MaxAbsDeriv returns every hidden unit's max |f'(z)| over the probe set,
// layer after layer.
func (p *DeadProbe) MaxAbsDeriv() []float64 {
	var out []float64
	for l := range p.ever {
		out = append(out, p.Units.MaxAbsDeriv(l)...)
	}
	return out
}

// EverDead returns the number of units dead at some probe, and how many of
// them are alive at the last.
func (p *DeadProbe) EverDead() (ever, revived int) {
	for l := range p.ever {
		dead := p.Units.Dead(l, p.Tol)
		for j, e := range p.ever[l] {
			if e {
				ever++
				if !dead[j] {
					revived++
				}
			}
		}
	}
	return ever, revived
}

// DeadMaxPre returns, for every unit dead at the last probe, its largest
// pre-activation over the probe set, layer after layer.
func (p *DeadProbe) DeadMaxPre() []float64 {
	var out []float64
	for l := range p.ever {
		mz, dead := p.Units.MaxPre(l), p.Units.Dead(l, p.Tol)
		for j := range dead {
			if dead[j] {
				out = append(out, mz[j])
			}
		}
	}
	return out
}

// DeadBelow returns the z below which |a'(z)| ≤ tol everywhere, to 0.001:
// the grid point before the first z, scanning up from −60, where |a'(z)|
// exceeds tol (NaN if none does up to 1). For the smooth activations it
// says how far below zero a pre-activation must be for a unit to count as
// dead at tol.
func DeadBelow(a activation.Activation, tol float64) float64 {
	for i := 1; i <= 61000; i++ {
		if z := float64(i-60000) / 1000; math.Abs(a.Deriv(z)) > tol {
			return z - 0.001
		}
	}
	return math.NaN()
}
