package main

// Part (a): the documents' single neuron, L = ½(a(w·x + b) − t)², at
// z = w·x + b = −1, differentiated through the graph and by hand, and
// trained by gradient descent from a few starting points.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/report"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The neuron's input and target, and gradient descent's settings. The
// documents fix only z = −1; t = 1 asks the neuron to raise its output,
// which needs z > 0 for every activation here.
const (
	neuronX, neuronW, neuronT = 1.5, -1.0, 1.0
	neuronLR                  = 0.1
)

var neuronStarts = []float64{-3, -1, -0.5}

// neuron is one single-neuron model on a graph.
type neuron struct {
	g       *graph.Graph
	w, b    *G.Node
	machine *graph.Machine
}

// newNeuron builds L = ½(a(w·x + b) − t)² with w = neuronW and b chosen so
// that z = z0 (exact in binary for the starts used here).
func newNeuron(a activation.Activation, dt tensor.Dtype, z0 float64) (*neuron, error) {
	g, err := graph.New(dt, 0)
	if err != nil {
		return nil, err
	}
	n := &neuron{g: g}
	x, _ := g.Input("x", 1)
	t, _ := g.Input("t", 1)
	if n.w, err = g.Param("w", graph.Constant(neuronW), 1); err != nil {
		return nil, err
	}
	if n.b, err = g.Param("b", graph.Constant(z0-neuronW*neuronX), 1); err != nil {
		return nil, err
	}
	loss, err := func() (l *G.Node, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("building the neuron: %v", r)
			}
		}()
		z := G.Must(G.Add(G.Must(G.HadamardProd(n.w, x)), n.b))
		y, err := a.Apply(z)
		if err != nil {
			return nil, err
		}
		d := G.Must(G.Sub(y, t))
		half := G.NewConstant(0.5)
		if dt == tensor.Float32 {
			half = G.NewConstant(float32(0.5))
		}
		return G.Mul(half, G.Must(G.Sum(G.Must(G.HadamardProd(d, d)))))
	}()
	if err != nil {
		return nil, err
	}
	if n.machine, err = g.Compile(loss); err != nil {
		return nil, err
	}
	for _, in := range []struct {
		node *G.Node
		v    float64
	}{{x, neuronX}, {t, neuronT}} {
		v := tensor.New(tensor.Of(dt), tensor.WithShape(1))
		setFloat(v, in.v)
		if err := n.machine.Set(in.node, v); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// grads runs the graph and returns ∂L/∂w, ∂L/∂b and L.
func (n *neuron) grads() (dw, db, loss float64, err error) {
	if err = n.machine.Run(); err != nil {
		return
	}
	gw, err := n.machine.Grad(n.w)
	if err != nil {
		return
	}
	gb, err := n.machine.Grad(n.b)
	if err != nil {
		return
	}
	loss, err = n.machine.Loss()
	return getFloat(gw), getFloat(gb), loss, err
}

// z returns w·x + b from the current parameters.
func (n *neuron) z() float64 {
	return getFloat(n.w.Value().(*tensor.Dense))*neuronX + getFloat(n.b.Value().(*tensor.Dense))
}

// neuronGradients compares the graph's ∂L/∂w at z = −1 with the analytic
// (a(z) − t)·a'(z)·x, in float64 and float32, for every activation.
func neuronGradients(r *report.Report, pg *page) error {
	var rows [][]any
	for _, a := range activation.All() {
		want := (a.F(-1) - neuronT) * a.Deriv(-1) * neuronX
		row := []any{a.Title(), a.F(-1), a.Deriv(-1), want}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			n, err := newNeuron(a, dt, -1)
			if err != nil {
				return fmt.Errorf("%s %v: %w", a, dt, err)
			}
			dw, db, _, err := n.grads()
			if err != nil {
				return fmt.Errorf("%s %v: %w", a, dt, err)
			}
			k := fmt.Sprintf("neuron.%s.%s.", a.Key(), dt)
			r.Set(k+"dL_dw", dw)
			r.Set(k+"dL_dw_analytic", want)
			r.Set(k+"dL_db", db)
			row = append(row, dw, relErr(dw, want))
		}
		r.Set("neuron."+a.Key()+".d1_at_m1", a.Deriv(-1))
		rows = append(rows, row)
	}
	pg.NeuronGradient = report.TableData{Header: []string{"activation", "a(−1)", "a'(−1)", "analytic ∂L/∂w", "graph ∂L/∂w float64", "rel. error",
		"graph ∂L/∂w float32", "rel. error f32"}, Rows: rows}
	return nil
}

// neuronDescent trains the neuron by plain gradient descent (optim.SGD)
// from each start and records z along the way.
func neuronDescent(r *report.Report, c config, pg *page) error {
	var rows [][]any
	var series []report.Series
	for _, a := range activation.All() {
		for _, z0 := range neuronStarts {
			n, err := newNeuron(a, tensor.Float64, z0)
			if err != nil {
				return err
			}
			opt := &optim.SGD{LearningRate: neuronLR}
			s := report.Series{Name: fmt.Sprintf("%s from %g", a.Title(), z0), Dashed: a != activation.GELU && a != activation.ReLU}
			var loss, loss0 float64
			for step := 0; step <= c.NeuronSteps; step++ {
				s.X, s.Y = append(s.X, float64(step)), append(s.Y, n.z())
				if _, _, loss, err = n.grads(); err != nil {
					return err
				}
				if step == 0 {
					loss0 = loss
				}
				if step == c.NeuronSteps {
					break
				}
				gs, _ := n.machine.Grads()
				if err := opt.Step(n.g.ParamTensors(), gs); err != nil {
					return err
				}
			}
			zEnd := n.z()
			k := fmt.Sprintf("descent.%s.z0_%g.", a.Key(), z0)
			r.Set(k+"z_end", zEnd)
			r.Set(k+"loss_end", loss)
			r.Set(k+"d1_end", a.Deriv(zEnd))
			rows = append(rows, []any{a.Title(), z0, a.Deriv(z0), loss0, zEnd, a.Deriv(zEnd), loss})
			// The plot shows GELU from every start and the other activations
			// (without GELU's approximations) from −1.
			if a == activation.GELU || (z0 == -1 && (a == activation.ReLU || a == activation.SiLU || a == activation.ELU || a == activation.Softplus)) {
				series = append(series, s)
			}
		}
	}
	pg.NeuronDescent = report.TableData{Header: []string{"activation", "start z", "a'(start)", "loss at start", "z after descent", "a'(end)",
		"loss after descent"}, Rows: rows}
	pg.DescentPlot = report.PlotSpec{Title: "Single neuron: z = w·x + b during gradient descent", XLabel: "step", YLabel: "z",
		Series: series, HLines: []float64{0, rootOf(activation.GELU)}, LegendLeft: true, Width: 6.5, Height: 5, DPI: c.DPI}
	return nil
}

// rootOf returns the zero of a' in [−5, 0], or 0 if it has none.
func rootOf(a activation.Activation) float64 {
	r, err := analysis.Roots(a, 1, -5, 0)
	if err != nil || len(r) == 0 {
		return 0
	}
	return r[0]
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func setFloat(t *tensor.Dense, v float64) {
	switch d := t.Data().(type) {
	case []float32:
		d[0] = float32(v)
	case []float64:
		d[0] = v
	}
}

func getFloat(t *tensor.Dense) float64 {
	switch d := t.Data().(type) {
	case []float32:
		return float64(d[0])
	case []float64:
		return d[0]
	}
	return math.NaN()
}
