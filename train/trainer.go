package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Task says how evaluation scores the model's Output.
type Task int

const (
	// Classification: Output holds logits (rows × classes); evaluation
	// reports mean cross-entropy and accuracy against the batch labels.
	Classification Task = iota
	// Regression: Output holds predictions shaped like the targets;
	// evaluation reports the mean squared error.
	Regression
)

// Model is a built graph and the nodes the trainer binds and reads.
type Model struct {
	Graph  *graph.Graph
	Input  *G.Node // bound to each batch's X
	Target *G.Node // bound to each batch's Y
	Output *G.Node // predictions, read by evaluation
	Loss   *G.Node // the scalar training loss
	Task   Task
}

// Config sets up a run. The zero value trains one epoch quietly with no
// files.
type Config struct {
	// Epochs is the number of passes over the training data. 0 means 1,
	// or, when MaxSteps is set, as many as MaxSteps needs.
	Epochs   int
	MaxSteps int            // stop after this many steps in total; 0: no limit
	ClipNorm float64        // clip the global gradient norm to this (0: off)
	Schedule optim.Schedule // learning rate per step; nil keeps the optimizer's
	// EvalEvery evaluates every this many steps, besides each epoch end
	// and the last step. EvalAtStart also evaluates the initial model (as
	// step 0; not when resuming). A step is never evaluated twice.
	EvalEvery   int
	EvalAtStart bool
	// Dir receives metrics and checkpoints; "" writes nothing.
	Dir string
	// CheckpointEvery writes a checkpoint every this many steps (0: at each
	// epoch end only). Needs Dir.
	CheckpointEvery int
	// Resume continues from Dir/checkpoint.safetensors when it exists,
	// after checking it belongs to this run (see the package doc).
	Resume bool
	// Quiet disables the progress display; Progress is where it goes
	// (default os.Stderr). The bar is drawn only on a terminal; otherwise
	// one line per evaluation is printed.
	Quiet    bool
	Progress io.Writer
	// Keep lists nodes whose values hooks read from Machine after each
	// step (pre-activations for dead-unit counts, say); see graph.Keep.
	Keep []*G.Node
	// OnStep runs after every optimizer step; OnEval after every
	// evaluation. An error stops training.
	OnStep func(t *Trainer, s StepInfo) error
	OnEval func(t *Trainer, e EvalInfo) error
}

// StepInfo describes a finished step.
type StepInfo struct {
	Step, Epoch, Batch int // Step counts from 1
	Loss, LR, GradNorm float64
}

// EvalInfo describes an evaluation.
type EvalInfo struct {
	Step, Epoch int
	TrainLoss   float64 // mean training loss since the previous evaluation
	ValLoss     float64
	ValAccuracy float64 // NaN for regression
}

// Result summarizes a run.
type Result struct {
	Steps int
	Evals []EvalInfo
}

// Trainer runs the loop. Its fields may be read by hooks.
type Trainer struct {
	Model     Model
	Optimizer optim.Optimizer
	TrainData *datasets.Loader
	ValData   *datasets.Loader
	Config    Config
	// Machine computes loss and gradients; EvalMachine only the forward pass.
	Machine, EvalMachine *graph.Machine

	params   []graph.NamedTensor
	lastEval int // step of the last evaluation, −1 before any
	step     int // steps done
	epoch    int // current epoch
	batch    int // next batch within the epoch
	sinceSum float64
	sinceN   int
	metrics  *metricsFiles
	progress *progress
	result   Result
}

// New checks the setup and compiles the training and evaluation machines.
// valData may be nil (no evaluation).
func New(model Model, opt optim.Optimizer, trainData, valData *datasets.Loader, cfg Config) (*Trainer, error) {
	switch {
	case model.Graph == nil || model.Input == nil || model.Target == nil || model.Loss == nil:
		return nil, errors.New("train.New: Model needs Graph, Input, Target and Loss")
	case valData != nil && model.Output == nil:
		return nil, errors.New("train.New: evaluation needs Model.Output")
	case opt == nil:
		return nil, errors.New("train.New: no optimizer")
	case trainData == nil || trainData.NumBatches() == 0:
		return nil, errors.New("train.New: the training data has no batches")
	case cfg.Epochs < 0 || cfg.MaxSteps < 0 || cfg.EvalEvery < 0 || cfg.CheckpointEvery < 0 || !(cfg.ClipNorm >= 0):
		return nil, fmt.Errorf("train.New: negative or NaN setting in %+v", cfg)
	case (cfg.CheckpointEvery > 0 || cfg.Resume) && cfg.Dir == "":
		return nil, errors.New("train.New: checkpoints need Config.Dir")
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 1
		if cfg.MaxSteps > 0 {
			// Rounded up without overflow: MaxSteps may be near MaxInt.
			nb := trainData.NumBatches()
			cfg.Epochs = cfg.MaxSteps / nb
			if cfg.MaxSteps%nb != 0 {
				cfg.Epochs++
			}
		}
	}
	if err := checkBatchFits("train.New", model, trainData, "training"); err != nil {
		return nil, err
	}
	if valData != nil {
		if err := checkBatchFits("train.New", model, valData, "validation"); err != nil {
			return nil, err
		}
	}
	t := &Trainer{Model: model, Optimizer: opt, TrainData: trainData, ValData: valData, Config: cfg,
		params: model.Graph.ParamTensors(), lastEval: -1}
	var err error
	if t.Machine, err = model.Graph.Compile(model.Loss, graph.Keep(cfg.Keep...)); err != nil {
		return nil, fmt.Errorf("train.New: %w", err)
	}
	if model.Output != nil {
		if t.EvalMachine, err = model.Graph.Compile(nil, graph.Keep(model.Output)); err != nil {
			return nil, fmt.Errorf("train.New: %w", err)
		}
	}
	return t, nil
}

func checkBatchFits(who string, m Model, l *datasets.Loader, what string) error {
	b, err := l.Batch(0, 0)
	if err != nil {
		return fmt.Errorf("%s: %s data: %w", who, what, err)
	}
	if !graph.SameShape(b.X.Shape(), m.Input.Shape()) || b.X.Dtype() != m.Input.Dtype() {
		return fmt.Errorf("%s: %s batches have X %v%v, input %q expects %v%v", who, what, b.X.Dtype(), b.X.Shape(), m.Input.Name(), m.Input.Dtype(), m.Input.Shape())
	}
	if !graph.SameShape(b.Y.Shape(), m.Target.Shape()) || b.Y.Dtype() != m.Target.Dtype() {
		return fmt.Errorf("%s: %s batches have Y %v%v, target %q expects %v%v", who, what, b.Y.Dtype(), b.Y.Shape(), m.Target.Name(), m.Target.Dtype(), m.Target.Shape())
	}
	return nil
}

// errNotFromNew is the error of a method called on a nil Trainer or one
// not made by New (its machines are missing).
func errNotFromNew(method string) error {
	return fmt.Errorf("train.Trainer.%s: the Trainer is nil or was not made by train.New", method)
}

// Step returns the number of optimizer steps done (0 for a nil Trainer).
func (t *Trainer) Step() int {
	if t == nil {
		return 0
	}
	return t.step
}

// Run trains until the last epoch or MaxSteps, evaluating, logging and
// checkpointing along the way, and finally writes Dir/model.safetensors.
func (t *Trainer) Run() (res Result, err error) {
	if t == nil || t.Machine == nil || t.TrainData == nil {
		return Result{}, errNotFromNew("Run")
	}
	defer func() { // also on error: how far the run got
		t.result.Steps = t.step
		res = t.result
	}()
	if t.Config.Dir != "" {
		if err := os.MkdirAll(t.Config.Dir, 0o755); err != nil {
			return res, fmt.Errorf("train: %w", err)
		}
		evalsUpTo := -1
		if t.Config.Resume {
			if evalsUpTo, err = t.resume(); err != nil {
				return res, err
			}
		}
		if t.metrics, err = openMetrics(t.Config.Dir, t.step, evalsUpTo); err != nil {
			return res, err
		}
		defer func() {
			if cerr := t.metrics.close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
	}
	t.progress = newProgress(t)
	defer t.progress.finish()
	if t.Config.EvalAtStart && t.step == 0 {
		if err := t.evaluate(); err != nil {
			return t.result, err
		}
	}
	for ; t.epoch < t.Config.Epochs; t.epoch, t.batch = t.epoch+1, 0 {
		for ; t.batch < t.TrainData.NumBatches(); t.batch++ {
			if t.Config.MaxSteps > 0 && t.step >= t.Config.MaxSteps {
				return t.finish()
			}
			if err := t.trainStep(); err != nil {
				return t.result, err
			}
		}
		t.batch = t.TrainData.NumBatches()
		if err := t.evaluate(); err != nil {
			return t.result, err
		}
		if t.Config.Dir != "" {
			t.epoch, t.batch = t.epoch+1, 0 // the checkpoint resumes at the next epoch
			err := t.checkpoint()
			t.epoch, t.batch = t.epoch-1, t.TrainData.NumBatches()
			if err != nil {
				return t.result, err
			}
		}
	}
	return t.finish()
}

func (t *Trainer) finish() (Result, error) {
	t.result.Steps = t.step
	if err := t.evaluate(); err != nil { // a no-op if this step was evaluated
		return t.result, err
	}
	if t.Config.Dir != "" {
		if err := saveModel(filepath.Join(t.Config.Dir, "model.safetensors"), t.params); err != nil {
			return t.result, err
		}
	}
	return t.result, nil
}

// trainStep runs batch t.batch of epoch t.epoch.
func (t *Trainer) trainStep() error {
	step, epoch, batch := t.step+1, t.epoch, t.batch // t.step advances half way
	where := func(err error) error {
		return fmt.Errorf("train: step %d (epoch %d, batch %d): %w", step, epoch, batch, err)
	}
	start := time.Now()
	b, err := t.TrainData.Batch(t.epoch, t.batch)
	if err != nil {
		return where(err)
	}
	g := t.Model.Graph
	g.SetTraining(true)
	g.SetStep(t.step)
	if t.Config.Schedule != nil {
		t.Optimizer.SetLR(t.Config.Schedule.LR(t.step))
	}
	loss, grads, err := Gradients(t.Machine, t.Model.Input, t.Model.Target, b.X, b.Y)
	if err != nil {
		return where(err)
	}
	norm, err := gradNorm(grads, t.Config.ClipNorm)
	if err != nil {
		return where(err)
	}
	if err := t.Optimizer.Step(t.params, grads); err != nil {
		return where(err)
	}
	t.step++
	t.sinceSum += loss
	t.sinceN++
	info := StepInfo{Step: t.step, Epoch: t.epoch, Batch: t.batch, Loss: loss, LR: t.Optimizer.LR(), GradNorm: norm}
	if t.metrics != nil {
		if err := t.metrics.step(info); err != nil {
			return where(err)
		}
	}
	t.progress.step(info, time.Since(start))
	if t.Config.OnStep != nil {
		if err := t.Config.OnStep(t, info); err != nil {
			return where(err)
		}
	}
	if t.Config.EvalEvery > 0 && t.step%t.Config.EvalEvery == 0 {
		if err := t.evaluate(); err != nil {
			return err
		}
	}
	if t.Config.CheckpointEvery > 0 && t.step%t.Config.CheckpointEvery == 0 {
		t.batch++ // resume after this batch
		err := t.checkpoint()
		t.batch--
		if err != nil {
			return err // names the step
		}
	}
	return nil
}

// gradNorm returns the global L2 norm of grads, clipping them to maxNorm
// when maxNorm > 0.
func gradNorm(grads []*tensor.Dense, maxNorm float64) (float64, error) {
	if maxNorm > 0 {
		return optim.ClipGradNorm(grads, maxNorm)
	}
	var ss float64
	for _, g := range grads {
		switch d := g.Data().(type) {
		case []float32:
			for _, v := range d {
				ss += float64(v) * float64(v)
			}
		case []float64:
			for _, v := range d {
				ss += v * v
			}
		}
	}
	return math.Sqrt(ss), nil
}
