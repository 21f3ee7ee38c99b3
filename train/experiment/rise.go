package experiment

// Instabilities of a training run: the largest rise of its smoothed
// per-step loss (MaxRise), per group and over a grid.

import "github.com/geluproject/gelu/train"

// MaxRise returns the largest MaxRise(r.Vectors[vector], k) over the
// group's runs and the step where it peaked; the first run wins a tie.
// It is −1, 0 for a group without runs.
func (g *Group[S]) MaxRise(vector string, k int) (rise float64, at int) {
	rise = -1
	for _, r := range g.Runs {
		if x, s := MaxRise(r.Vectors[vector], k); x > rise {
			rise, at = x, s
		}
	}
	return rise, at
}

// Rise is a run whose smoothed per-step loss climbed: by Rise above its
// lowest value so far, peaking at step At.
type Rise[S any] struct {
	*Run[S]
	Rise float64
	At   int
}

// Rises returns, in the order of runs, the runs whose MaxRise of
// Vectors[vector] (trailing mean over k steps) is above limit.
func Rises[S any](runs []*Run[S], vector string, k int, limit float64) []Rise[S] {
	var out []Rise[S]
	for _, r := range runs {
		if x, at := MaxRise(r.Vectors[vector], k); x > limit {
			out = append(out, Rise[S]{r, x, at})
		}
	}
	return out
}

// Throughput returns the seconds runs spent in optimizer steps
// (Run.StepSeconds, evaluations excluded) and the examples they trained
// on, perStep per step (the batch size; tokens for a language model), in
// the order of runs.
func Throughput[S any](runs []*Run[S], perStep int) (seconds, examples float64) {
	for _, r := range runs {
		seconds += r.StepSeconds
		examples += float64(r.Steps * perStep)
	}
	return seconds, examples
}

// RecordLoss returns a train.Config.OnStep that appends every step's
// mini-batch loss to r.Vectors[vector], the sequence MaxRise and
// Group.TrailingBand read.
func (r *Run[S]) RecordLoss(vector string) func(*train.Trainer, train.StepInfo) error {
	return func(_ *train.Trainer, si train.StepInfo) error {
		r.Vectors[vector] = append(r.Vectors[vector], si.Loss)
		return nil
	}
}
