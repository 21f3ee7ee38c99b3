package mlpnet

// The network most experiments here train: an MLP classifier with its
// inputs and cross-entropy loss on a graph of its own, ready for
// train.New or probe.Net.

import (
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// Classifier builds, on a new graph of dtype dt seeded with seed, the
// inputs "x" (batch × cfg.In) and "y" (batch labels), the MLP "mlp" with
// cfg, its logits and their cross-entropy loss against y, and returns them
// as a train.Model (Task Classification) with the MLP, whose Pre holds the
// hidden pre-activations of this forward pass. Options change the order
// in which the nodes are added (InputsLast).
func Classifier(dt tensor.Dtype, seed uint64, batch int, cfg nn.MLPConfig, opts ...ClassifierOption) (train.Model, *nn.MLP, error) {
	var o classifierOptions
	for _, opt := range opts {
		opt(&o)
	}
	g, err := graph.New(dt, seed)
	if err != nil {
		return train.Model{}, nil, err
	}
	m := train.Model{Graph: g, Task: train.Classification}
	inputs := func() error {
		var err1, err2 error
		m.Input, err1 = g.Input("x", batch, cfg.In)
		m.Target, err2 = g.Input("y", batch)
		return firstErr(err1, err2)
	}
	if !o.inputsLast {
		if err := inputs(); err != nil {
			return train.Model{}, nil, err
		}
	}
	mlp, err := nn.NewMLP(g, "mlp", cfg)
	if err != nil {
		return train.Model{}, nil, err
	}
	if o.inputsLast {
		if err := inputs(); err != nil {
			return train.Model{}, nil, err
		}
	}
	if m.Output, err = mlp.Forward(m.Input); err != nil {
		return train.Model{}, nil, err
	}
	m.Loss, err = nn.CrossEntropyLoss(m.Output, m.Target)
	return m, mlp, err
}

// A ClassifierOption changes how Classifier builds its graph.
type ClassifierOption func(*classifierOptions)

type classifierOptions struct {
	inputsLast bool
}

// InputsLast makes Classifier add the inputs x and y after the MLP's
// parameters instead of before. The network and its initial weights are
// the same; only the nodes' numbers differ, and they show in the names of
// nodes built from them: the loss is "cross_entropy(%c, %7)" rather than
// "cross_entropy(%c, %1)", and a diverged run's message quotes it. A
// program whose reports were made with that order (gelu-vs-relu) keeps
// them byte for byte with this option.
func InputsLast() ClassifierOption {
	return func(o *classifierOptions) { o.inputsLast = true }
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ProbeSteps is a train.Config.OnStep that calls probe every every steps
// and at step last, with the mean training loss since the call before. It
// calls probe for step 0 (before training, loss NaN) first, and returns
// its error with a nil hook.
//
//	onStep, err := mlpnet.ProbeSteps(25, steps, func(step int, loss float64) error { … })
//	t, err := train.New(model, opt, trainL, testL, train.Config{MaxSteps: steps, OnStep: onStep})
func ProbeSteps(every, last int, probe func(step int, meanLoss float64) error) (func(*train.Trainer, train.StepInfo) error, error) {
	var sum float64
	var n int
	call := func(step int) error {
		loss := sum / float64(n)
		sum, n = 0, 0
		return probe(step, loss)
	}
	if err := call(0); err != nil {
		return nil, err
	}
	return func(_ *train.Trainer, si train.StepInfo) error {
		sum += si.Loss
		n++
		if si.Step%every == 0 || si.Step == last {
			return call(si.Step)
		}
		return nil
	}, nil
}
