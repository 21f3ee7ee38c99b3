package train

import (
	"fmt"

	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gradients runs one batch forward and backward: it sets the input and
// target nodes to x and y, runs m, checks that every value of the run is
// finite (before any optimizer can touch the weights) and returns the loss
// and the gradients, in the machine's parameter order (nil for a parameter
// the loss does not use). The tensors are the machine's, valid until its
// next run.
//
// It is the step Trainer takes for each batch, without binding named
// fields, the optimizer and the bookkeeping; programs that look inside
// training (package probe) take the same step.
func Gradients(m *graph.Machine, input, target *G.Node, x, y *tensor.Dense) (loss float64, grads []*tensor.Dense, err error) {
	if m == nil || input == nil || target == nil {
		return 0, nil, fmt.Errorf("train.Gradients: nil machine, input or target")
	}
	if err := m.Set(input, x); err != nil {
		return 0, nil, err
	}
	if err := m.Set(target, y); err != nil {
		return 0, nil, err
	}
	return runGradients(m, true)
}

// runGradients runs m on the inputs bound to it and returns the loss and
// the gradients, once every value is known to be finite if check is set.
func runGradients(m *graph.Machine, check bool) (loss float64, grads []*tensor.Dense, err error) {
	if err := m.Run(); err != nil {
		return 0, nil, err
	}
	if check {
		if err := m.CheckFinite(); err != nil {
			return 0, nil, err
		}
	}
	if loss, err = m.Loss(); err != nil {
		return 0, nil, err
	}
	if grads, err = m.Grads(); err != nil {
		return 0, nil, err
	}
	return loss, grads, nil
}
