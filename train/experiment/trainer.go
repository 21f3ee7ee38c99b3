package experiment

// Running a train.Trainer as one run of a grid.

import (
	"context"
	"errors"
	"time"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
)

// Train runs t (train.Trainer.Run with ctx) and records in r the steps
// done, the wall time and the time spent in optimizer steps. A run that
// diverges (a NaN or infinite loss, gradient or weight; see Diverged) is a
// result, not an error: Train records the error in r.Diverged and returns
// nil. Train chains its timing before t's OnStep and OnEval hooks; set
// them before calling it.
//
// The run's folder r.Dir belongs to the grid, which decides by
// fingerprint which finished runs to reuse: a trainer writing there
// (Config.Dir = r.Dir) without Config.Resume starts the run again,
// replacing what an unfinished earlier attempt left (Config.Overwrite).
func (r *Run[S]) Train(ctx context.Context, t *train.Trainer) error {
	if t != nil && r.Dir != "" && t.Config.Dir == r.Dir && !t.Config.Resume {
		t.Config.Overwrite = true
	}
	start := time.Now()
	mark := start
	onStep, onEval := t.Config.OnStep, t.Config.OnEval
	t.Config.OnStep = func(t *train.Trainer, s train.StepInfo) error {
		r.StepSeconds += time.Since(mark).Seconds()
		var err error
		if onStep != nil {
			err = onStep(t, s)
		}
		mark = time.Now()
		return err
	}
	t.Config.OnEval = func(t *train.Trainer, e train.EvalInfo) error {
		var err error
		if onEval != nil {
			err = onEval(t, e)
		}
		mark = time.Now()
		return err
	}
	_, err := t.Run(ctx)
	r.Seconds, r.Steps = time.Since(start).Seconds(), t.Step()
	if Diverged(err) {
		r.Diverged = err.Error()
		return nil
	}
	return err
}

// Diverged reports whether err is training stopped by a non-finite value:
// graph.ErrNonFinite (loss or gradient) or optim.ErrNonFiniteParam (a
// weight after the update).
func Diverged(err error) bool {
	return errors.Is(err, graph.ErrNonFinite) || errors.Is(err, optim.ErrNonFiniteParam)
}
