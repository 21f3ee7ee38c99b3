package main

// The experiment: the same data, initial weights and batch order for every
// activation; one training run each, timed, then the report.

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// evalPoint is one evaluation of a run. Step 0 is the initial model.
type evalPoint struct {
	Step      int
	TrainLoss float64 // mean minibatch loss since the previous evaluation (NaN at step 0)
	ValLoss   float64 // mean cross-entropy (nats) over the evaluation windows
	ValAcc    float64 // fraction of windows whose most likely next character is right
}

// runResult is one activation's run.
type runResult struct {
	Act     ops.Activation
	Evals   []evalPoint
	Steps   []float64 // per-step training loss
	ValRows []float64 // per-window validation loss of the final model
	Seconds float64   // wall time in optimizer steps (forward, backward, update), evaluations excluded
	Tokens  int       // positions trained on: steps × batch
}

func (r runResult) final() evalPoint { return r.Evals[len(r.Evals)-1] }

func (r runResult) tokensPerSec() float64 { return float64(r.Tokens) / r.Seconds }

// data is the task shared by every run.
type data struct {
	Name             string
	Chars            int
	Train, Val, Eval *datasets.Dataset // Eval: the validation windows scored
	Vocab            *datasets.CharVocab
	TrainLen, ValLen int
}

// results is what run returns besides the files.
type results struct {
	Data  data
	Shape shape
	Runs  []runResult
}

func loadData(c config) (data, error) {
	d := data{Name: "Newton's Opticks (datasets.Opticks)"}
	text := datasets.Opticks()
	if c.TextFile != "" {
		var err error
		if text, err = datasets.LoadText(c.TextFile); err != nil {
			return d, err
		}
		d.Name = filepath.Base(c.TextFile)
	}
	var err error
	d.Train, d.Val, d.Vocab, err = datasets.CharTask(text, datasets.CharTaskConfig{Context: c.Context, ValFraction: c.ValFraction, Seed: c.Seed, ChunkLen: c.ChunkLen})
	if err != nil {
		return d, err
	}
	d.Chars, d.TrainLen, d.ValLen = len([]rune(text)), d.Train.Len(), d.Val.Len()
	d.Eval = d.Val
	if c.ValWindows > 0 && c.ValWindows < d.ValLen {
		idx := rng.New(c.Seed, "validation windows").Perm(d.ValLen)[:c.ValWindows]
		slices.Sort(idx)
		if d.Eval, err = d.Val.Subset(idx); err != nil {
			return d, err
		}
	}
	if d.TrainLen < c.Batch {
		return d, fmt.Errorf("%d training windows, fewer than one batch of %d: use a longer text or a smaller -batch", d.TrainLen, c.Batch)
	}
	return d, nil
}

func run(c config) (*results, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	s := shape{Vocab: d.Vocab.Size(), Context: c.Context, Embed: c.Embed, Dim: c.Dim, Hidden: c.Hidden, Layers: c.Layers}
	res := &results{Data: d, Shape: s}
	for i, act := range c.Acts {
		if !c.Quiet {
			fmt.Fprintf(c.progress(), "[%d/%d] %s: %d steps of %d windows\n", i+1, len(c.Acts), act.Name(), c.Steps, c.Batch)
		}
		r, err := trainOne(c, d, s, act)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", act.Name(), err)
		}
		res.Runs = append(res.Runs, r)
	}
	return res, writeReport(c, res)
}

// trainOne trains a fresh model with activation act. The seeds of the
// weights and of the batch order do not depend on act.
func trainOne(c config, d data, s shape, act ops.Activation) (runResult, error) {
	r := runResult{Act: act}
	m, err := buildModel(s, act, c.Batch, c.Seed)
	if err != nil {
		return r, err
	}
	if c.Init != "" {
		if err := loadInit(c.Init, m, s); err != nil {
			return r, err
		}
	}
	trainData, err := datasets.NewLoader(d.Train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: c.Seed, DropLast: true})
	if err != nil {
		return r, err
	}
	valData, err := datasets.NewLoader(d.Eval, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return r, err
	}
	sched, err := optim.Cosine(c.LR, c.Steps, 0)
	if err != nil {
		return r, err
	}
	if sched, err = optim.Warmup(sched, c.Warmup); err != nil {
		return r, err
	}
	// Time only the steps: from the end of the previous step or evaluation
	// to the end of this step.
	var mark time.Time
	var sinceEval []float64
	cfg := train.Config{
		Epochs: (c.Steps + trainData.NumBatches() - 1) / trainData.NumBatches(), MaxSteps: c.Steps, EvalEvery: c.EvalEvery, Schedule: sched, ClipNorm: c.Clip,
		Dir: filepath.Join(c.Out, key(act)), Quiet: c.Quiet, Progress: c.Progress,
		OnStep: func(_ *train.Trainer, si train.StepInfo) error {
			r.Seconds += time.Since(mark).Seconds()
			r.Tokens += c.Batch
			r.Steps = append(r.Steps, si.Loss)
			sinceEval = append(sinceEval, si.Loss)
			mark = time.Now()
			return nil
		},
		OnEval: func(t *train.Trainer, e train.EvalInfo) error {
			if r.final().Step == e.Step { // an epoch that ends on an EvalEvery step is evaluated twice
				return nil
			}
			r.Evals = append(r.Evals, evalPoint{Step: e.Step, TrainLoss: e.TrainLoss, ValLoss: e.ValLoss, ValAcc: e.ValAccuracy})
			sinceEval = sinceEval[:0]
			mark = time.Now()
			return nil
		},
	}
	t, err := train.New(m, &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}, trainData, valData, cfg)
	if err != nil {
		return r, err
	}
	p0, _, err := evaluate(t)
	if err != nil {
		return r, err
	}
	r.Evals = append(r.Evals, p0)
	mark = time.Now()
	if _, err := t.Run(); err != nil {
		return r, err
	}
	// A last evaluation when the run did not end on one, and the
	// per-window losses of the final model for the paired comparison.
	p, rows, err := evaluate(t)
	if err != nil {
		return r, err
	}
	if r.final().Step != c.Steps {
		p.Step, p.TrainLoss = c.Steps, mean(sinceEval)
		r.Evals = append(r.Evals, p)
	}
	r.ValRows = rows
	return r, nil
}

// evaluate scores the model on the evaluation windows in float64: the
// cross-entropy of each window and the accuracy.
func evaluate(t *train.Trainer) (evalPoint, []float64, error) {
	p := evalPoint{TrainLoss: math.NaN(), Step: t.Step()}
	g := t.Model.Graph
	g.SetTraining(false)
	defer g.SetTraining(true)
	var rows []float64
	correct := 0
	for i := range t.ValData.NumBatches() {
		b, err := t.ValData.Batch(0, i)
		if err != nil {
			return p, nil, err
		}
		if err := t.EvalMachine.Set(t.Model.Input, b.X); err != nil {
			return p, nil, err
		}
		if err := t.EvalMachine.Run(); err != nil {
			return p, nil, err
		}
		v, err := t.EvalMachine.Value(t.Model.Output)
		if err != nil {
			return p, nil, err
		}
		out, ok := v.(*tensor.Dense)
		if !ok || out.Dtype() != tensor.Float32 {
			return p, nil, fmt.Errorf("evaluation: logits are %T, want a float32 tensor", v)
		}
		logits, classes := out.Float32s(), out.Shape()[1]
		for j := range b.Size {
			row := logits[j*classes : (j+1)*classes]
			best := 0
			for k, z := range row {
				if z > row[best] {
					best = k
				}
			}
			var sum float64
			for _, z := range row {
				sum += math.Exp(float64(z) - float64(row[best]))
			}
			rows = append(rows, math.Log(sum)-(float64(row[b.Labels[j]])-float64(row[best])))
			if best == b.Labels[j] {
				correct++
			}
		}
	}
	p.ValLoss, p.ValAcc = mean(rows), float64(correct)/float64(len(rows))
	return p, rows, nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func (c config) progress() io.Writer {
	if c.Progress != nil {
		return c.Progress
	}
	return os.Stderr
}
