package probe

// The single neuron's gradient through the graph against its closed form.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/ops/activation"
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
