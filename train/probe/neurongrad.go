package probe

// The single neuron's gradient through the graph against its closed form.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// NeuronGrad is the graph's gradient of a single neuron in one dtype,
// beside the closed form ∂L/∂w = (a(z) − t)·a'(z)·x in float64.
type NeuronGrad struct {
	Dtype    tensor.Dtype
	DW, DB   float64 // ∂L/∂w and ∂L/∂b through the graph
	Analytic float64 // (a(z) − t)·a'(z)·x
	// RelErr is |DW − Analytic|/|Analytic|, or |DW| where Analytic is 0.
	RelErr float64
}

// NeuronGrads returns the gradient of the neuron of NewNeuron(a, dt, x,
// w, z, t) at z in each of dts.
func NeuronGrads(a activation.Activation, x, w, z, t float64, dts ...tensor.Dtype) ([]NeuronGrad, error) {
	want := (a.F(z) - t) * a.Deriv(z) * x
	var out []NeuronGrad
	for _, dt := range dts {
		n, err := NewNeuron(a, dt, x, w, z, t)
		if err != nil {
			return nil, fmt.Errorf("%s %v: %w", a, dt, err)
		}
		dw, db, _, err := n.Grads()
		if err != nil {
			return nil, fmt.Errorf("%s %v: %w", a, dt, err)
		}
		rel := math.Abs(dw - want)
		if want != 0 {
			rel /= math.Abs(want)
		}
		out = append(out, NeuronGrad{Dtype: dt, DW: dw, DB: db, Analytic: want, RelErr: rel})
	}
	return out, nil
}

// Descent is plain gradient descent of a single neuron in float64.
type Descent struct {
	Zs          []float64 // z before every step and after the last
	Loss0, Loss float64   // the loss at the start and at the end
}

// NeuronDescent takes steps steps of gradient descent at learning rate lr
// on the neuron of NewNeuron(a, Float64, x, w, z0, t) (Neuron.Descend).
func NeuronDescent(a activation.Activation, x, w, z0, t, lr float64, steps int) (Descent, error) {
	n, err := NewNeuron(a, tensor.Float64, x, w, z0, t)
	if err != nil {
		return Descent{}, err
	}
	var d Descent
	d.Zs, d.Loss0, d.Loss, err = n.Descend(lr, steps)
	return d, err
}

// End returns z after the last step.
func (d Descent) End() float64 { return d.Zs[len(d.Zs)-1] }

// Series returns z against the step.
func (d Descent) Series(name string) report.Series {
	s := report.Series{Name: name, Y: d.Zs}
	for step := range d.Zs {
		s.X = append(s.X, float64(step))
	}
	return s
}
