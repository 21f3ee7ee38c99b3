package transformer

// A run trained on a warmed-up cosine learning-rate schedule, with any
// optimizer: the recipe of the Transformer programs.

import (
	"context"
	"errors"
	"github.com/geluproject/gelu/train/experiment"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
)

// Cosine is a training recipe: Batch examples a step for Steps steps; the
// learning rate rises linearly over Warmup steps to LR, then follows a
// cosine down to Floor at Steps; the global gradient norm is clipped to
// Clip (0: off); the model is evaluated at step 0 and every EvalEvery
// steps.
type Cosine struct {
	Batch, Steps, EvalEvery, Warmup int
	LR, Floor, Clip                 float64
}

// TrainCosine trains m with opt by the recipe c as run r of a grid, until
// done or ctx is cancelled: on
// trainSet, shuffled by r.Seed, in whole batches; evaluated on evalSet, in
// order (also at every epoch's end, as train.Trainer does). cfg is the
// rest of the trainer's configuration (progress, hooks); TrainCosine sets
// its MaxSteps, EvalEvery, EvalAtStart, Schedule, ClipNorm and Dir
// (r.Dir). A run that diverges is a result, as with Run.Train: it stops,
// r.Diverged says why, and TrainCosine returns the trainer and no error;
// its weights are then not finite, so a final evaluation (on the
// trainer's ValData, say) must check r.Diverged first.
func TrainCosine[S any](ctx context.Context, r *experiment.Run[S], m train.Model, opt optim.Optimizer, trainSet, evalSet *datasets.Dataset, c Cosine, cfg train.Config) (*train.Trainer, error) {
	trainData, err1 := experiment.Loader(trainSet, c.Batch, true, r.Seed)
	evalData, err2 := experiment.Loader(evalSet, c.Batch, false, 0)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	sched, err := optim.Cosine(c.LR, c.Steps, c.Floor)
	if err == nil {
		sched, err = optim.Warmup(sched, c.Warmup)
	}
	if err != nil {
		return nil, err
	}
	cfg.MaxSteps, cfg.EvalEvery, cfg.EvalAtStart, cfg.Schedule, cfg.ClipNorm, cfg.Dir = c.Steps, c.EvalEvery, true, sched, c.Clip, r.Dir
	t, err := train.New(m, opt, trainData, evalData, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.Train(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}
