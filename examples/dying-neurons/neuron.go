package main

// Part (a): the documents' single neuron, L = ½(a(w·x + b) − t)², at
// z = w·x + b = −1 (probe.Neuron), differentiated through the graph and by
// hand, and trained by gradient descent from a few starting points.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
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

// neuronGradients compares the graph's ∂L/∂w at z = −1 with the analytic
// (a(z) − t)·a'(z)·x, in float64 and float32, for every activation.
func neuronGradients(r *report.Report, pg *page) error {
	var rows [][]any
	for _, a := range activation.All() {
		want := (a.F(-1) - neuronT) * a.Deriv(-1) * neuronX
		row := []any{a.Title(), a.F(-1), a.Deriv(-1), want}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			n, err := probe.NewNeuron(a, dt, neuronX, neuronW, -1, neuronT)
			if err != nil {
				return fmt.Errorf("%s %v: %w", a, dt, err)
			}
			dw, db, _, err := n.Grads()
			if err != nil {
				return fmt.Errorf("%s %v: %w", a, dt, err)
			}
			k := fmt.Sprintf("neuron.%s.%s.", a.Key(), dt)
			r.SetAll(k, map[string]float64{"dL_dw": dw, "dL_dw_analytic": want, "dL_db": db})
			row = append(row, dw, relErr(dw, want))
		}
		r.Set("neuron."+a.Key()+".d1_at_m1", a.Deriv(-1))
		rows = append(rows, row)
	}
	pg.NeuronGradient = report.TableData{Header: []string{"activation", "a(−1)", "a'(−1)", "analytic ∂L/∂w", "graph ∂L/∂w float64", "rel. error",
		"graph ∂L/∂w float32", "rel. error f32"}, Rows: rows}
	return nil
}

// neuronDescent trains the neuron by plain gradient descent from each
// start and records z along the way.
func neuronDescent(r *report.Report, pg *page) error {
	var rows [][]any
	var series []report.Series
	for _, a := range activation.All() {
		for _, z0 := range neuronStarts {
			n, err := probe.NewNeuron(a, tensor.Float64, neuronX, neuronW, z0, neuronT)
			if err != nil {
				return err
			}
			zs, loss0, loss, err := n.Descend(neuronLR, pg.NeuronSteps)
			if err != nil {
				return err
			}
			s := report.Series{Name: fmt.Sprintf("%s from %g", a.Title(), z0), Dashed: a != activation.GELU && a != activation.ReLU, Y: zs}
			for step := range zs {
				s.X = append(s.X, float64(step))
			}
			zEnd := n.Z()
			r.SetAll(fmt.Sprintf("descent.%s.z0_%g.", a.Key(), z0), map[string]float64{"z_end": zEnd, "loss_end": loss, "d1_end": a.Deriv(zEnd)})
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
		Series: series, HLines: []float64{0, rootOf(activation.GELU)}, LegendLeft: true, Width: 6.5, Height: 5, DPI: pg.DPI}
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
