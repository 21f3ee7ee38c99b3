package experiment

import (
	"context"
	"errors"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/optim"
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

// SplitMetrics are what TrainSplits records at every evaluation, in this
// order. Losses are mean cross-entropies in nats, errors fractions
// misclassified. train_loss is the mean mini-batch loss since the
// evaluation before (dropout on, if any); train_loss_nodrop the loss on
// Splits.TrainEval, a fixed training subset scored with dropout off (NaN
// without that split); val_* are on Splits.Val (NaN without it); test_*
// on Splits.Test, the trainer's own evaluation set.
var SplitMetrics = []string{"train_loss", "train_loss_nodrop", "val_loss", "val_error", "test_loss", "test_error"}

// TrainSplits trains model with opt as the run r (Run.Train: a divergence
// is a result) on s's loaders for r.Seed in batches of batch
// (Splits.Loaders): the training loader as cfg says, into r.Dir, with the
// test loader as the trainer's evaluation set. At each evaluation it adds
// SplitMetrics to r.Curve (the grid's Metrics must be SplitMetrics), then
// calls cfg.OnEval if set.
func TrainSplits[S any](ctx context.Context, r *Run[S], model train.Model, opt optim.Optimizer, s Splits, batch int, cfg train.Config) error {
	l, err := s.Loaders(batch, r.Seed)
	if err != nil {
		return err
	}
	cfg.Dir = r.Dir
	onEval := cfg.OnEval
	cfg.OnEval = func(t *train.Trainer, e train.EvalInfo) error {
		sc, err := l.Score(t)
		if err == nil {
			err = r.Curve.Add(e.Step, e.TrainLoss, sc.TrainEvalLoss, sc.ValLoss, sc.ValError, e.ValLoss, 1-e.ValAccuracy)
		}
		if err == nil && onEval != nil {
			err = onEval(t, e)
		}
		return err
	}
	t, err := train.New(model, opt, l.Train, l.Test, cfg)
	if err != nil {
		return err
	}
	return r.Train(ctx, t)
}
