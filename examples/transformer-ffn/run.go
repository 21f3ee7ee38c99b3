package main

// The experiment: the same data for every run; per seed, the same initial
// weights and batch order for every activation; then the report.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
)

type runResult = experiment.Run[activation.Activation]

// data is the task shared by every run.
type data struct {
	Name             string // the -text file's name; "" for the Opticks
	Chars            int
	Train, Val, Eval *datasets.Dataset // Eval: the validation windows scored
	Vocab            *datasets.CharVocab
}

// results is what run returns besides the files.
type results struct {
	Data  data
	Shape shape
	Runs  []*runResult // seeds outermost, then activations in -acts order
}

func loadData(c config) (d data, err error) {
	if err := c.check(); err != nil {
		return d, err
	}
	text := datasets.Opticks() // d.Name "": report.md.tmpl names it
	if c.TextFile != "" {
		if text, err = datasets.LoadText(c.TextFile); err != nil {
			return d, err
		}
		d.Name = filepath.Base(c.TextFile)
	}
	d.Train, d.Val, d.Vocab, err = datasets.CharTask(text, datasets.CharTaskConfig{Context: c.Context, ValFraction: c.ValFraction, Seed: c.Seed, ChunkLen: c.ChunkLen})
	if err != nil {
		return d, err
	}
	d.Chars, d.Eval = len([]rune(text)), d.Val
	if c.ValWindows > 0 && c.ValWindows < d.Val.Len() {
		idx := rng.New(c.Seed, "validation windows").Perm(d.Val.Len())[:c.ValWindows]
		slices.Sort(idx)
		if d.Eval, err = d.Val.Subset(idx); err != nil {
			return d, err
		}
	}
	if d.Train.Len() < c.Batch {
		return d, fmt.Errorf("%d training windows, fewer than one batch of %d: use a longer text or a smaller -batch", d.Train.Len(), c.Batch)
	}
	return d, nil
}

func run(c config) (*results, error) {
	d, err := loadData(c) // checks c first
	if err != nil {
		return nil, err
	}
	s := shape{Vocab: d.Vocab.Size(), Context: c.Context, Embed: c.Embed, Dim: c.Dim, Hidden: c.Hidden, Layers: c.Layers}
	grid := experiment.Grid[activation.Activation]{Settings: c.Acts, Seeds: experiment.SeedRange(c.Seed, c.Seeds), Name: key, Dir: c.Out,
		Workers: c.Workers, Metrics: []string{"train_loss", "val_loss", "val_bpc", "val_accuracy"}}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	if !c.Quiet {
		grid.Progress = c.Progress
	}
	runs, err := grid.Run(func(r *runResult) error { return trainOne(c, d, s, r) })
	if err != nil {
		return nil, err
	}
	res := &results{Data: d, Shape: s, Runs: runs}
	return res, writeReport(c, res)
}

// trainOne trains a fresh model with the run's activation. The initial
// weights and the batch order depend on the seed only.
func trainOne(c config, d data, s shape, r *runResult) error {
	m, err := buildModel(s, r.Setting, c.Batch, r.Seed)
	if err != nil {
		return err
	}
	if c.Init != "" {
		if err := loadInit(c.Init, m, s); err != nil {
			return err
		}
	}
	trainData, err := datasets.NewLoader(d.Train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: r.Seed, DropLast: true})
	if err != nil {
		return err
	}
	valData, err := datasets.NewLoader(d.Eval, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return err
	}
	sched, err := optim.Cosine(c.LR, c.Steps, 0)
	if err == nil {
		sched, err = optim.Warmup(sched, c.Warmup)
	}
	if err != nil {
		return err
	}
	t, err := train.New(m, &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}, trainData, valData, train.Config{
		MaxSteps: c.Steps, EvalEvery: c.EvalEvery, EvalAtStart: true, Schedule: sched, ClipNorm: c.Clip,
		Dir: r.Dir, Quiet: c.Quiet || c.Workers > 1, Progress: c.Progress,
		OnStep: func(_ *train.Trainer, si train.StepInfo) error {
			r.Vectors["step_loss"] = append(r.Vectors["step_loss"], si.Loss)
			return nil
		},
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
			return r.Curve.Add(e.Step, e.TrainLoss, e.ValLoss, bits(e.ValLoss), e.ValAccuracy)
		}})
	if err != nil {
		return err
	}
	if err := r.Train(t); err != nil {
		return err
	}
	if r.Diverged != "" {
		return errors.New(r.Diverged)
	}
	// Each window's loss under the final model, for the paired comparison.
	e, err := t.Evaluate(valData)
	r.Vectors["val_rows"] = e.Rows
	return err
}

func bits(nats float64) float64 { return nats / math.Ln2 }
