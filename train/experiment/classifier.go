package experiment

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
// hidden pre-activations of this forward pass.
func Classifier(dt tensor.Dtype, seed uint64, batch int, cfg nn.MLPConfig) (train.Model, *nn.MLP, error) {
	g, err := graph.New(dt, seed)
	if err != nil {
		return train.Model{}, nil, err
	}
	x, err1 := g.Input("x", batch, cfg.In)
	y, err2 := g.Input("y", batch)
	if err := firstErr(err1, err2); err != nil {
		return train.Model{}, nil, err
	}
	mlp, err := nn.NewMLP(g, "mlp", cfg)
	if err != nil {
		return train.Model{}, nil, err
	}
	logits, err := mlp.Forward(x)
	if err != nil {
		return train.Model{}, nil, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Task: train.Classification}, mlp, err
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
//	onStep, err := experiment.ProbeSteps(25, steps, func(step int, loss float64) error { … })
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
