package experiment

import (
	"errors"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/train"
)

// SplitLoaders are one run's loaders of the Splits (Splits.Loaders).
type SplitLoaders struct {
	Train, Test, Val, TrainEval *datasets.Loader // Val, TrainEval: nil when the split is absent
}

// Loaders returns the loaders of s's splits for the run with this seed, in
// batches of batch (Loader): Train shuffled by seed, dropping its last
// partial batch; Test, Val and TrainEval in order and whole.
func (s Splits) Loaders(batch int, seed uint64) (SplitLoaders, error) {
	var l SplitLoaders
	var err [4]error
	l.Train, err[0] = Loader(s.Train, batch, true, seed)
	l.Test, err[1] = Loader(s.Test, batch, false, seed)
	l.Val, err[2] = Loader(s.Val, batch, false, seed)
	l.TrainEval, err[3] = Loader(s.TrainEval, batch, false, seed)
	return l, errors.Join(err[:]...)
}

// Scores are what a run measures at an evaluation besides the trainer's
// own evaluation set: mean losses and error rates (Score), NaN for a
// split not in use.
type Scores struct {
	ValLoss, ValError, TrainEvalLoss, TrainEvalError float64
}

// Score evaluates t's model on Val and TrainEval (Score).
func (l SplitLoaders) Score(t *train.Trainer) (Scores, error) {
	var s Scores
	var err [2]error
	s.ValLoss, s.ValError, err[0] = Score(t, l.Val)
	s.TrainEvalLoss, s.TrainEvalError, err[1] = Score(t, l.TrainEval)
	return s, errors.Join(err[:]...)
}
