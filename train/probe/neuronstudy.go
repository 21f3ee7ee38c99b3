package probe

// The single neuron of one activation, as a report shows it: the gradient
// through the graph against the closed form, and gradient descent from a
// few starts, as table cells and summary values.

import (
	"fmt"

	"github.com/geluproject/gelu/ops/activation"
	"gorgonia.org/tensor"
)

// NeuronStudy is the neuron L = ½(a(w·x + b) − t)² of one activation: its
// gradient at Z in each dtype against the closed form (NeuronGrads), and
// plain gradient descent from each of Starts (NeuronDescent).
type NeuronStudy struct {
	Act      activation.Activation
	Z        float64
	Grads    []NeuronGrad // one per dtype
	Starts   []float64
	Descents []Descent // one per start
}

// StudyNeuron returns the study of a's neuron with input x, weight w and
// target t: NeuronGrads(a, x, w, z, t, dts...), then NeuronDescent from
// each start z0 in starts, steps steps at learning rate lr.
func StudyNeuron(a activation.Activation, x, w, z, t, lr float64, steps int, starts []float64, dts ...tensor.Dtype) (*NeuronStudy, error) {
	grads, err := NeuronGrads(a, x, w, z, t, dts...)
	if err != nil {
		return nil, err
	}
	s := &NeuronStudy{Act: a, Z: z, Grads: grads, Starts: starts}
	for _, z0 := range starts {
		d, err := NeuronDescent(a, x, w, z0, t, lr, steps)
		if err != nil {
			return nil, err
		}
		s.Descents = append(s.Descents, d)
	}
	return s, nil
}

// GradCells returns a row of a table of gradients: a(Z), a'(Z), the closed
// form ∂L/∂w, then for each dtype the graph's ∂L/∂w and its relative
// error.
func (s *NeuronStudy) GradCells() []any {
	row := []any{s.Act.F(s.Z), s.Act.Deriv(s.Z), s.Grads[0].Analytic}
	for _, g := range s.Grads {
		row = append(row, g.DW, g.RelErr)
	}
	return row
}

// DescentCells returns a row of a table of descents, for descent i: the
// start z, a' there, the loss there, z after the last step, a' there, the
// loss there.
func (s *NeuronStudy) DescentCells(i int) []any {
	d, z0 := s.Descents[i], s.Starts[i]
	return []any{z0, s.Act.Deriv(z0), d.Loss0, d.End(), s.Act.Deriv(d.End()), d.Loss}
}

// GradValues returns the gradients by summary key: "<dtype>.dL_dw" (the
// graph's), "<dtype>.dL_dw_analytic" (the closed form) and "<dtype>.dL_db".
func (s *NeuronStudy) GradValues() map[string]float64 {
	v := map[string]float64{}
	for _, g := range s.Grads {
		v[fmt.Sprintf("%s.dL_dw", g.Dtype)], v[fmt.Sprintf("%s.dL_dw_analytic", g.Dtype)], v[fmt.Sprintf("%s.dL_db", g.Dtype)] = g.DW, g.Analytic, g.DB
	}
	return v
}

// DescentValues returns the end of each descent by summary key:
// "z0_<start>.z_end", "z0_<start>.loss_end" and "z0_<start>.d1_end" (a'
// at the end).
func (s *NeuronStudy) DescentValues() map[string]float64 {
	v := map[string]float64{}
	for i, d := range s.Descents {
		k := fmt.Sprintf("z0_%g.", s.Starts[i])
		v[k+"z_end"], v[k+"loss_end"], v[k+"d1_end"] = d.End(), d.Loss, s.Act.Deriv(d.End())
	}
	return v
}
