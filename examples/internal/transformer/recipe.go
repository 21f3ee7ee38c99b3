package transformer

// A run trained on a warmed-up cosine learning-rate schedule, with any
// optimizer (Cosine) or with nanoGPT's AdamW (NanoGPT): the recipes of the
// Transformer programs.

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

// NanoGPT is nanoGPT's training recipe (train.py): AdamW with weight decay
// WeightDecay on the parameters of two or more dimensions and none on the
// others (configure_optimizers; optim.NanoGPTAdamW) and betas (Beta1,
// Beta2); the learning rate rising linearly over Warmup steps to LR, then
// falling along a cosine to MinLR at Steps; the global gradient norm
// clipped to Clip (0: off); evaluation at step 0, every EvalEvery steps and
// at the end.
//
// The schedule is nanoGPT's get_lr (optim.NanoGPTCosine) with
// lr_decay_iters = Steps.
type NanoGPT struct {
	Steps, EvalEvery, Warmup                   int
	LR, MinLR, Beta1, Beta2, WeightDecay, Clip float64
}

// TrainNanoGPT trains m by the recipe n as run r of a grid, until done or
// ctx is cancelled: on trainData (a datasets.TokenStream of random
// windows, say), evaluated on valData. cfg is the rest of the trainer's
// configuration (progress, hooks); TrainNanoGPT sets its MaxSteps,
// EvalEvery, EvalAtStart, Schedule, ClipNorm and Dir (r.Dir), and SaveBest
// when r has a folder (nanoGPT's always_save_checkpoint = False keeps the
// best model). A run that diverges is a result, as with TrainCosine: it
// stops, r.Diverged says why, and TrainNanoGPT returns no error.
func TrainNanoGPT[S any](ctx context.Context, r *experiment.Run[S], m train.Model, trainData, valData train.Data, n NanoGPT, cfg train.Config) (*train.Trainer, error) {
	if m.Graph == nil {
		return nil, errors.New("transformer.TrainNanoGPT: the model has no graph")
	}
	opt := optim.NanoGPTAdamW(m.Graph.ParamTensors(), n.LR, n.WeightDecay)
	opt.Beta1, opt.Beta2 = n.Beta1, n.Beta2
	sched, err := optim.NanoGPTCosine(n.LR, n.MinLR, n.Warmup, n.Steps) // lr_decay_iters = max_iters
	if err != nil {
		return nil, err
	}
	cfg.MaxSteps, cfg.EvalEvery, cfg.EvalAtStart, cfg.Schedule, cfg.ClipNorm = n.Steps, n.EvalEvery, true, sched, n.Clip
	cfg.Dir, cfg.SaveBest = r.Dir, r.Dir != ""
	t, err := train.New(m, opt, trainData, valData, cfg)
	if err != nil {
		return nil, err
	}
	return t, r.Train(ctx, t)
}
