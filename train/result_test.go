package train_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// Result.Best and BestStep hold the best validation loss (Monitor's
// default) whenever there is validation data, with neither SaveBest nor
// Patience set, a resumed run's earlier evaluations included; ResumedAt
// says where the Run started (−1: fresh), Steps where it ended. Without
// validation data Best is NaN and BestStep −1.
func TestResultTracksBestAndResume(t *testing.T) {
	cfg := train.Config{MaxSteps: 12, EvalEvery: 2, Schedule: lrUntil{0.05, 6}}
	tr, _ := newTrainer(t, cfg)
	full, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	step, best := firstMin(full.Evals)
	if full.BestStep != step || full.Best != best || full.ResumedAt != -1 || full.Steps != 12 || step < 0 {
		t.Errorf("fresh run: best %v at step %d, resumed at %d, %d steps; want the evaluations' best %v at step %d, −1, 12 steps",
			full.Best, full.BestStep, full.ResumedAt, full.Steps, best, step)
	}

	dir := t.TempDir()
	first := cfg
	first.MaxSteps, first.CheckpointEvery, first.Dir = 8, 8, dir
	tr, _ = newTrainer(t, first)
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := cfg
	second.Dir, second.Resume = dir, true
	tr, _ = newTrainer(t, second)
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedAt != 8 || res.Steps != 12 || res.BestStep != full.BestStep || res.Best != full.Best {
		t.Errorf("resumed run: resumed at %d, %d steps, best %v at step %d; want 8, 12, the uninterrupted run's %v at step %d",
			res.ResumedAt, res.Steps, res.Best, res.BestStep, full.Best, full.BestStep)
	}
	if res.BestStep > 8 {
		t.Fatalf("the best (step %d) is after the resume: the test does not tell whether the checkpoint carried it", res.BestStep)
	}

	s := regression(t, tensor.Float64, regressionData(1))
	noVal, err := train.New(s.model, s.opt, s.trainData, nil, train.Config{MaxSteps: 3, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err = noVal.Run(context.Background())
	if err != nil || !math.IsNaN(res.Best) || res.BestStep != -1 || res.ResumedAt != -1 {
		t.Errorf("without validation data: best %v at step %d, resumed at %d (%v); want NaN, −1, −1", res.Best, res.BestStep, res.ResumedAt, err)
	}
}

// A context cancelled before the first step writes nothing (no checkpoint
// or model that would make the directory hold a run) and Run returns the
// context's error; a resumed run cancelled before its first step leaves
// its files as they were.
func TestCancelBeforeFirstStepWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, _ := newTrainer(t, train.Config{MaxSteps: 4, EvalAtStart: true, CheckpointEvery: 2, Dir: dir})
	res, err := tr.Run(ctx)
	if !errors.Is(err, context.Canceled) || res.Steps != 0 || res.ResumedAt != -1 {
		t.Errorf("cancelled before the start: %v, %d steps, resumed at %d; want context.Canceled, 0, −1", err, res.Steps, res.ResumedAt)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cancelled run made its directory: %v", err)
	}

	// Cancelled during the evaluation at the start: the metrics of that
	// evaluation may be written, no checkpoint and no model.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	tr, _ = newTrainer(t, train.Config{MaxSteps: 4, EvalAtStart: true, CheckpointEvery: 2, Dir: dir,
		OnEval: func(*train.Trainer, train.EvalInfo) error { cancel(); return nil }})
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before the first step") {
		t.Errorf("cancelled at the start's evaluation: %v, want context.Canceled, saying no step was taken", err)
	}
	for _, name := range []string{"checkpoint.safetensors", "model.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("cancelled before the first step, the run wrote %s", name)
		}
	}
	// Nothing in dir makes it a run's: a run without Resume or Overwrite
	// starts there.
	tr, _ = newTrainer(t, train.Config{MaxSteps: 2, CheckpointEvery: 2, Dir: dir})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatalf("a run in the directory of a run cancelled before its first step: %v", err)
	}
	before := readAll(t, dir)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	tr, _ = newTrainer(t, train.Config{MaxSteps: 4, CheckpointEvery: 2, Dir: dir, Resume: true})
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("resume cancelled before the start: %v", err)
	}
	for name, b := range readAll(t, dir) {
		if string(b) != string(before[name]) {
			t.Errorf("a resume cancelled before its first step changed %s", name)
		}
	}
}
