package experiment

// The step arithmetic of an epoch-based run: steps per epoch, how often
// to evaluate, where the trainer evaluates, and a step as an epoch.

import "fmt"

// EpochPlan is the step plan of a run of whole epochs over a training set.
type EpochPlan struct {
	PerEpoch  int   // optimizer steps per epoch: full batches of the training set
	EvalEvery int   // train.Config.EvalEvery
	EvalSteps []int // where train.Trainer evaluates (EvalSteps)
}

// NewEpochPlan returns the plan of epochs epochs over n training examples
// in batches of batch (the last partial batch dropped), evaluated about
// evalsPerEpoch times an epoch and at every epoch's end.
func NewEpochPlan(n, batch, epochs, evalsPerEpoch int) (EpochPlan, error) {
	if batch < 1 || epochs < 1 || evalsPerEpoch < 1 {
		return EpochPlan{}, fmt.Errorf("experiment.NewEpochPlan: batch %d, %d epochs, %d evaluations per epoch: want each ≥ 1", batch, epochs, evalsPerEpoch)
	}
	e := EpochPlan{PerEpoch: n / batch}
	if e.PerEpoch == 0 {
		return EpochPlan{}, fmt.Errorf("%d training examples make no batch of %d", n, batch)
	}
	e.EvalEvery = max(1, e.PerEpoch/evalsPerEpoch)
	e.EvalSteps = EvalSteps(epochs, e.PerEpoch, e.EvalEvery)
	return e, nil
}

// Epoch returns step as a (fractional) epoch: the epochs done at the end
// of step.
func (e EpochPlan) Epoch(step int) float64 { return float64(step) / float64(e.PerEpoch) }
