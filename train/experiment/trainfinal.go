package experiment

import (
	"context"
	"math"

	"github.com/geluproject/gelu/train"
)

// TrainFinal runs t (Train) and records in r.Values[key] what value reads
// from t's last evaluation (test accuracy, say): NaN if t made none, or if
// the run diverged, as a diverged network has no final value and an
// earlier evaluation would flatter it. Like Train it chains before t's
// OnEval hook; set that first.
//
//	err := r.TrainFinal(ctx, t, "accuracy", func(e train.EvalInfo) float64 { return e.ValAccuracy })
func (r *Run[S]) TrainFinal(ctx context.Context, t *train.Trainer, key string, value func(train.EvalInfo) float64) error {
	if r.Values == nil {
		r.Values = map[string]float64{}
	}
	r.Values[key] = math.NaN()
	onEval := t.Config.OnEval
	t.Config.OnEval = func(t *train.Trainer, e train.EvalInfo) error {
		r.Values[key] = value(e)
		if onEval != nil {
			return onEval(t, e)
		}
		return nil
	}
	if err := r.Train(ctx, t); err != nil {
		return err
	}
	if r.Diverged != "" {
		r.Values[key] = math.NaN()
	}
	return nil
}
