package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/dist"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Task says how evaluation scores the model's Output against the target.
type Task int

const (
	// Classification: Output holds logits, one row of classes per target
	// id: (rows × classes) against one label per row, or a language
	// model's (rows·T × vocab) against (rows × T) next-token ids. The
	// target field must hold ids; a target of −1 is not scored (nanoGPT's
	// ignore_index). Evaluation reports the mean cross-entropy over the
	// targets scored and the fraction whose largest logit is the target.
	Classification Task = iota
	// Regression: Output holds predictions shaped like the targets, float
	// values; evaluation reports the mean squared error.
	Regression
)

func (t Task) String() string {
	switch t {
	case Classification:
		return "Classification"
	case Regression:
		return "Regression"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Data is what the trainer reads batches from: a fixed number of batches
// per epoch, batch i of epoch e a pure function of (e, i) so that a run
// resumes exactly. *datasets.Loader and *datasets.TokenStream are Data.
// Training batches must have the graph's rows; evaluation batches may
// have any number (see Trainer.Evaluate).
type Data interface {
	NumBatches() int
	Batch(epoch, i int) (datasets.Batch, error)
}

// Model is a built graph and the nodes the trainer binds and reads. Each
// graph input is bound to the batch field of its name (datasets.Field):
// Input to "x", Target to "y", and Inputs[name] to the field name, so a
// model takes any number of inputs and targets. Integer ids in a field
// are converted to the input's float dtype when they are bound.
type Model struct {
	Graph  *graph.Graph
	Input  *G.Node            // bound to the field "x"
	Target *G.Node            // bound to the field "y"; evaluation scores Output against it
	Inputs map[string]*G.Node // further inputs, bound to the fields of these names
	Output *G.Node            // predictions, read by evaluation
	Loss   *G.Node            // the scalar training loss
	Task   Task
	// Args describes the model's configuration (nanoGPT's model_args:
	// every field that changes the function). When set it is written into
	// checkpoints, best.safetensors and model.safetensors as the metadata
	// "model_args" (a JSON object, keys sorted), and resuming compares it
	// with the checkpoint's, refusing any difference unless
	// Config.AllowArgsMismatch. Nil with a Module that has Args()
	// (every model of package nn has): the Module's.
	Args map[string]string
	// Module is the model the graph trains (an nn.GPT, an nn.MLP, a
	// module of your own), whose parameters must be the Graph's. When set,
	// model.safetensors and best.safetensors hold its PyTorch state dict,
	// as train.SaveWeights(path, Module, StateDict...) writes it: names
	// relative to the module, a tied GPT head's lm_head.weight copy, so
	// that nanoGPT's strict load_state_dict reads them. Nil: they hold
	// every parameter of Graph under its graph name. The checkpoint holds
	// every parameter of Graph either way, as a resume needs them.
	Module nn.Module
	// StateDict are the options of Module's state dict in those files:
	// nn.CausalMaskBuffers() for nanoGPT on torch 1.x, which registers
	// its causal masks as buffers (torch ≥ 2 refuses them).
	StateDict []nn.StateDictOption
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
	// GradAccum is nanoGPT's gradient_accumulation_steps: each optimizer
	// step runs forward and backward on this many consecutive batches and
	// steps on the mean of their gradients, the gradient of their mean
	// loss, so a step equals one on a batch GradAccum times larger (up to
	// the order of summation). Clipping and the logged norm apply to the
	// accumulated gradient. An epoch is NumBatches/GradAccum steps; the
	// NumBatches mod GradAccum batches left over are skipped. 0 means 1.
	GradAccum int
	// EvalEvery evaluates every this many steps, besides each epoch end
	// and the last step. EvalAtStart also evaluates the initial model (as
	// step 0; not when resuming). A step is never evaluated twice.
	EvalEvery   int
	EvalAtStart bool
	// Monitor names the validation metric whose best Result reports and
	// Patience and SaveBest watch: "val_loss" (the default; lower is
	// better) or "val_accuracy" (higher is better). An evaluation
	// improves on the best so far only if strictly better (NaN never is).
	Monitor string
	// Patience stops training early, as a normal end, once this many
	// evaluations in a row have not improved Monitor (0: never). The
	// final evaluation and model.safetensors are written as at any end.
	Patience int
	// SaveBest keeps Dir/best.safetensors: the parameters at the best
	// evaluation so far, rewritten at each improvement (nanoGPT with
	// always_save_checkpoint = False). Needs Dir.
	SaveBest bool
	// Dir receives metrics and checkpoints; "" writes nothing.
	Dir string
	// CheckpointEvery writes a checkpoint every this many steps (0: at each
	// epoch end only). Needs Dir.
	CheckpointEvery int
	// Resume continues from Dir/checkpoint.safetensors, after checking it
	// belongs to this run (see the package doc); without one the run
	// starts at step 0 and says so. Overwrite starts again in a Dir that
	// holds a checkpoint or a model. With neither, Run refuses such a Dir
	// before writing anything.
	Resume    bool
	Overwrite bool
	// AllowArgsMismatch resumes a checkpoint whose model_args differ from
	// Model.Args.
	AllowArgsMismatch bool
	// Quiet disables the progress display; Progress is where it goes
	// (default os.Stderr). The bar is drawn only on a terminal; otherwise
	// one line per evaluation is printed.
	Quiet    bool
	Progress io.Writer
	// Keep lists nodes whose values hooks read from Machine after each
	// step (pre-activations for dead-unit counts, say); see graph.Keep.
	// With GradAccum > 1 they hold the last batch's values.
	Keep []*G.Node
	// OnStep runs after every optimizer step; OnEval after every
	// evaluation. An error stops training.
	OnStep func(t *Trainer, s StepInfo) error
	OnEval func(t *Trainer, e EvalInfo) error

	// Comm trains data-parallel over the ranks (processes) of a
	// communicator of package train/dist (see the package doc): each rank
	// trains on its share of every batch of TrainData, the global batch,
	// and the gradients are averaged over the ranks before each step. nil,
	// or a communicator of one rank, trains in this process alone.
	Comm dist.Comm
	// Reduce configures the averaging (dist.Options: the deterministic
	// mode, the bucket size, a timeout for a rank that stops answering).
	Reduce dist.Options
	// ParamCheckEvery compares the ranks' parameters, bit for bit, every
	// this many steps (dist.CheckParams); 0 means DefaultParamCheckEvery.
	ParamCheckEvery int
}

// StepInfo describes a finished step. Epochs and batches count from 0
// everywhere (files, console, hooks), as Data.Batch takes them.
type StepInfo struct {
	Step, Epoch, Batch int // Step counts from 1; Batch is the step's first batch
	// Loss is the mean training loss of the step's batches; GradNorm the
	// global L2 norm of the (accumulated) gradient before clipping.
	Loss, LR, GradNorm float64
}

// EvalInfo describes an evaluation. A value not measured is NaN here, an
// empty cell in evals.csv, null in evals.jsonl and "–" on the console:
// TrainLoss when no step was taken since the previous evaluation
// (TrainSteps 0), ValLoss without validation data, ValAccuracy for
// regression.
type EvalInfo struct {
	Step, Epoch int
	TrainLoss   float64 // mean training loss of the TrainSteps steps since the previous evaluation
	TrainSteps  int
	ValLoss     float64
	ValAccuracy float64
}

// Result summarizes a run.
type Result struct {
	// Steps is the number of optimizer steps of the run in all, those
	// before a resume included: the step it ended at.
	Steps int
	// ResumedAt is the step at which this Run resumed a checkpoint, −1
	// when it started without one (at step 0).
	ResumedAt int
	Evals     []EvalInfo // the evaluations of this Run (not those before a resume)
	// EarlyStopped is set when Patience ended the run.
	EarlyStopped bool
	// BestStep and Best are the step and value of the best evaluation of
	// Config.Monitor (val_loss unless set), tracked whenever there is
	// validation data, the evaluations before a resume included (a
	// checkpoint records the best); −1 and NaN without validation data or
	// before the first evaluation.
	BestStep int
	Best     float64
}

// Trainer runs the loop. Its fields may be read by hooks.
type Trainer struct {
	Model     Model
	Optimizer optim.Optimizer
	TrainData Data
	ValData   Data
	Config    Config
	// Machine computes loss and gradients; EvalMachine only the forward pass.
	Machine, EvalMachine *graph.Machine

	params    []graph.NamedTensor
	par       *parallel // data-parallel state; nil in one process
	feeds     *feeds
	monitor   monitor
	tokens    bool // the input is a sequence of ids: count tokens/s
	acc       []*tensor.Dense
	lastEval  int // step of the last evaluation, −1 before any
	step      int // steps done
	startStep int // step at which this Run started
	epoch     int // current epoch
	batch     int // next batch within the epoch
	sinceSum  float64
	sinceN    int
	best      float64 // best value of the monitored metric, ±Inf before any
	bestStep  int     // its step, −1 before any
	stale     int     // evaluations since the best
	stop      bool    // Patience ran out
	metrics   *metricsFiles
	progress  *progress
	result    Result
}

// New checks the setup against the first batch of each data set and
// compiles the training and evaluation machines. valData may be nil (no
// evaluation). The checks include the task: a Classification model needs
// ids in its target field and one row of logits per id, a Regression one
// float targets shaped like its Output.
func New(model Model, opt optim.Optimizer, trainData, valData Data, cfg Config) (*Trainer, error) {
	trainData, valData = orNil(trainData), orNil(valData)
	switch {
	case model.Graph == nil || model.Loss == nil:
		return nil, errors.New("train.New: Model needs Graph and Loss")
	case valData != nil && (model.Output == nil || model.Target == nil):
		return nil, errors.New("train.New: evaluation needs Model.Output and Model.Target")
	case opt == nil:
		return nil, errors.New("train.New: no optimizer")
	case trainData == nil || trainData.NumBatches() <= 0:
		return nil, errors.New("train.New: the training data has no batches")
	case (cfg.CheckpointEvery > 0 || cfg.Resume || cfg.SaveBest) && cfg.Dir == "":
		return nil, errors.New("train.New: checkpoints (CheckpointEvery, Resume, SaveBest) need Config.Dir")
	case cfg.Resume && cfg.Overwrite:
		return nil, errors.New("train.New: Resume and Overwrite both set: choose one")
	case (cfg.Patience > 0 || cfg.SaveBest) && valData == nil:
		return nil, errors.New("train.New: Patience and SaveBest watch the validation data, and there is none")
	}
	if err := checkCounts(cfg); err != nil {
		return nil, err
	}
	if cfg.GradAccum == 0 {
		cfg.GradAccum = 1
	}
	steps := trainData.NumBatches() / cfg.GradAccum
	if steps == 0 {
		return nil, fmt.Errorf("train.New: GradAccum %d is more than the %d batches of an epoch", cfg.GradAccum, trainData.NumBatches())
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 1
		if cfg.MaxSteps > 0 {
			// Rounded up without overflow: MaxSteps may be near MaxInt.
			cfg.Epochs = cfg.MaxSteps / steps
			if cfg.MaxSteps%steps != 0 {
				cfg.Epochs++
			}
		}
	}
	if err := checkModule(&model); err != nil {
		return nil, err
	}
	mon, err := newMonitor(cfg, model.Task, valData != nil)
	if err != nil {
		return nil, err
	}
	f, err := newFeeds(model)
	if err != nil {
		return nil, fmt.Errorf("train.New: %w", err)
	}
	t := &Trainer{Model: model, Optimizer: opt, TrainData: trainData, ValData: valData, Config: cfg,
		params: model.Graph.ParamTensors(), feeds: f, monitor: mon, lastEval: -1,
		best: mon.worst(), bestStep: -1, result: Result{ResumedAt: -1}}
	if cfg.Comm != nil && cfg.Comm.Size() > 1 {
		b, err := trainData.Batch(0, 0)
		if err != nil {
			return nil, fmt.Errorf("train.New: training data: %w", err)
		}
		if t.par, err = newParallel(cfg, f, b); err != nil {
			return nil, fmt.Errorf("train.New: %w", err)
		}
	}
	first, err := t.checkData("train.New", trainData, "training", true)
	if err != nil {
		return nil, err
	}
	if x, ok := first.Field("x"); ok && model.Input != nil && x.IDs != nil && len(x.Shape) == 2 {
		t.tokens = true
	}
	if valData != nil {
		if _, err := t.checkData("train.New", valData, "validation", false); err != nil {
			return nil, err
		}
	}
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

// checkCounts names a Config count that is negative, or a ClipNorm that
// is negative or NaN, with what 0 means.
func checkCounts(cfg Config) error {
	for _, f := range []struct {
		name string
		v    int
		zero string
	}{
		{"Epochs", cfg.Epochs, "1, or as many as MaxSteps needs"},
		{"MaxSteps", cfg.MaxSteps, "no limit"},
		{"EvalEvery", cfg.EvalEvery, "evaluate at epoch ends only"},
		{"CheckpointEvery", cfg.CheckpointEvery, "checkpoint at epoch ends only"},
		{"GradAccum", cfg.GradAccum, "1, no accumulation"},
		{"Patience", cfg.Patience, "never stop early"},
		{"ParamCheckEvery", cfg.ParamCheckEvery, "every DefaultParamCheckEvery steps"},
	} {
		if f.v < 0 {
			return fmt.Errorf("train.New: Config.%s = %d, want ≥ 0 (0: %s)", f.name, f.v, f.zero)
		}
	}
	if !(cfg.ClipNorm >= 0) {
		return fmt.Errorf("train.New: Config.ClipNorm = %v, want ≥ 0 (0: no clipping)", cfg.ClipNorm)
	}
	return nil
}

// checkModule checks Model.Module against the graph and its state-dict
// options, and takes its Args when Model.Args is nil.
func checkModule(m *Model) error {
	if m.Module == nil {
		if len(m.StateDict) > 0 {
			return errors.New("train.New: Model.StateDict is set without Model.Module: set Module to the model whose state dict the files hold")
		}
		return nil
	}
	ps, err := nn.ParamTensors(m.Module)
	if err != nil {
		return fmt.Errorf("train.New: Model.Module: %w", err)
	}
	for _, p := range ps {
		if n, ok := m.Graph.Lookup(p.Name); !ok || !m.Graph.IsParam(n) || n.Value() != p.Value {
			return fmt.Errorf("train.New: Model.Module's parameter %q is not a parameter of Model.Graph: build the module on the graph you train", p.Name)
		}
	}
	if _, err := nn.StateDict(m.Module, m.StateDict...); err != nil {
		return fmt.Errorf("train.New: Model.Module and Model.StateDict: %w", err)
	}
	if a, ok := m.Module.(interface{ Args() map[string]string }); ok && m.Args == nil {
		m.Args = a.Args()
	}
	return nil
}

// orNil turns a nil pointer in d (a nil *datasets.Loader, say) into a nil
// Data, so that it means "no data" as an untyped nil does.
func orNil(d Data) Data {
	if v := reflect.ValueOf(d); d == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil
	}
	return d
}

// checkData checks the first batch of d against the model's inputs and,
// when the model has a Target and an Output, its task.
func (t *Trainer) checkData(who string, d Data, what string, exact bool) (datasets.Batch, error) {
	b, err := d.Batch(0, 0)
	if err != nil {
		return b, fmt.Errorf("%s: %s data: %w", who, what, err)
	}
	if err := t.feeds.check(b, exact); err != nil {
		return b, fmt.Errorf("%s: %s data: %w", who, what, err)
	}
	m := t.Model
	if m.Target == nil || m.Output == nil {
		return b, nil
	}
	y, _ := b.Field("y")
	out, target := m.Output.Shape(), m.Target.Shape()
	switch m.Task {
	case Classification:
		if y.IDs == nil {
			return b, fmt.Errorf("%s: the Task is Classification, which scores class ids, but the %s target %q holds float values %v: set Model.Task = train.Regression for a regression model", who, what, m.Target.Name(), y.Shape)
		}
		if len(out) < 2 || out.TotalSize()/out[len(out)-1] != target.TotalSize() {
			return b, fmt.Errorf("%s: the Task is Classification, which needs one row of logits per target id, but Output %q is %v for target %q %v (for a language model: logits (rows·T × vocab) for targets (rows × T)); set Model.Task = train.Regression for a regression model",
				who, m.Output.Name(), out, m.Target.Name(), target)
		}
	case Regression:
		if y.IDs != nil {
			return b, fmt.Errorf("%s: the Task is Regression, but the %s target %q holds class ids: leave Model.Task as train.Classification", who, what, m.Target.Name())
		}
		if out.TotalSize() != target.TotalSize() || out[0] != target[0] {
			return b, fmt.Errorf("%s: the Task is Regression, which needs Output shaped like the target, but Output %q is %v and target %q %v", who, m.Output.Name(), out, m.Target.Name(), target)
		}
	default:
		return b, fmt.Errorf("%s: unknown %v, want train.Classification or train.Regression", who, m.Task)
	}
	return b, nil
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

// stepsPerEpoch is the number of optimizer steps of an epoch.
func (t *Trainer) stepsPerEpoch() int { return t.TrainData.NumBatches() / t.Config.GradAccum }

// Run trains until the last epoch, MaxSteps or early stopping, evaluating,
// logging and checkpointing along the way, and finally writes
// Dir/model.safetensors.
//
// Cancelling ctx stops the run between two steps: Run then writes a
// checkpoint at that step and the model file (when Dir is set) and
// returns an error wrapping ctx.Err() (context.Canceled, or
// context.DeadlineExceeded). Resuming from that checkpoint continues as
// if nothing had happened. A cancel before this Run's first step writes
// no checkpoint and no model (a Dir holding them counts as a run's): a
// ctx done when Run is called returns its error before anything is read
// or written, and one cancelled later, during the evaluation at the
// start, leaves only that evaluation's metrics.
func (t *Trainer) Run(ctx context.Context) (res Result, err error) {
	if t == nil || t.Machine == nil || t.TrainData == nil || t.feeds == nil {
		return Result{}, errNotFromNew("Run")
	}
	if ctx == nil {
		return Result{}, errors.New("train.Trainer.Run: nil context, want context.Background() or one to cancel")
	}
	defer func() { // also on error: how far the run got
		t.result.Steps, t.result.BestStep, t.result.Best = t.step, t.bestStep, t.monitor.report(t.best, t.bestStep)
		res = t.result
	}()
	t.result.ResumedAt = -1
	if err := ctx.Err(); err != nil {
		return t.result, fmt.Errorf("train: cancelled before the first step, nothing written: %w", err)
	}
	t.progress = newProgress(t)
	defer t.progress.finish()
	if t.par != nil {
		if err := t.beginParallel(); err != nil {
			return res, err
		}
	}
	if t.Config.Dir != "" {
		evalsUpTo, err := t.prepareDir()
		if err == nil && t.writes() {
			t.metrics, err = openMetrics(t.Config.Dir, t.step, evalsUpTo)
		}
		if t.metrics != nil {
			defer func() {
				if cerr := t.metrics.close(); err == nil && cerr != nil {
					err = cerr
				}
			}()
		}
		if err = t.agree(err); err != nil {
			return res, err
		}
	}
	if t.par != nil {
		if err := t.agreeResumed(); err != nil {
			return res, err
		}
	}
	t.startStep = t.step
	t.progress.start()
	if t.Config.EvalAtStart && t.step == 0 {
		if err := t.evaluate(); err != nil {
			return t.result, err
		}
	}
	nb, k := t.TrainData.NumBatches(), t.Config.GradAccum
	for ; t.epoch < t.Config.Epochs; t.epoch, t.batch = t.epoch+1, 0 {
		for ; t.batch+k <= nb; t.batch += k {
			if err := t.stopRequested(ctx); err != nil {
				return t.result, t.canceled(err)
			}
			if t.stop || (t.Config.MaxSteps > 0 && t.step >= t.Config.MaxSteps) {
				return t.finish()
			}
			if err := t.trainStep(ctx); err != nil {
				return t.result, err
			}
		}
		t.batch = t.stepsPerEpoch() * k
		if err := t.evaluate(); err != nil {
			return t.result, err
		}
		if t.Config.Dir != "" {
			end := t.batch
			t.epoch, t.batch = t.epoch+1, 0 // the checkpoint resumes at the next epoch
			err := t.checkpoint()
			t.epoch, t.batch = t.epoch-1, end
			if err != nil {
				return t.result, err
			}
		}
	}
	return t.finish()
}

// errPeerStopped is why a rank stops whose own context did not end.
var errPeerStopped = fmt.Errorf("another rank's context ended: %w", context.Canceled)

// stopRequested is ctx's error, or in data-parallel training a stop any
// rank asked for at the last exchange, so that all stop at one step.
func (t *Trainer) stopRequested(ctx context.Context) error {
	if t.par == nil {
		return ctx.Err()
	}
	if !t.par.stop {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errPeerStopped
}

// writes reports whether this process writes the run's files: with a
// Dir, in one process or as rank 0.
func (t *Trainer) writes() bool {
	return t.Config.Dir != "" && (t.par == nil || t.par.rank == 0)
}

// prepareDir creates Dir and, before anything in it is written, refuses a
// directory holding another run unless Resume or Overwrite says what to
// do with it; it resumes, or clears the files of the run it overwrites.
// It returns the step of the last evaluation the checkpoint covers.
//
// Data-parallel ranks other than 0 write nothing: with Resume they read
// the same checkpoint (Dir must be on a file system every rank sees), and
// rank 0's decisions reach them through the agreement that follows.
func (t *Trainer) prepareDir() (evalsUpTo int, err error) {
	dir := t.Config.Dir
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	if !t.writes() {
		if t.Config.Resume && exists(checkpointFile) {
			return t.resume()
		}
		return -1, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return -1, fmt.Errorf("train: %w", err)
	}
	hasCheckpoint, hasModel := exists(checkpointFile), exists(modelFile)
	switch {
	case t.Config.Resume && hasCheckpoint:
		if evalsUpTo, err = t.resume(); err != nil {
			return -1, err
		}
		t.result.ResumedAt = t.step
		t.progress.say("resumed from %s at step %d", dir, t.step)
		return evalsUpTo, nil
	case t.Config.Resume && hasModel:
		return -1, fmt.Errorf("train: %s holds %s but no %s to resume from: set Config.Overwrite to train again from step 0", dir, modelFile, checkpointFile)
	case t.Config.Resume:
		t.progress.say("no checkpoint in %s: starting at step 0", dir)
	case (hasCheckpoint || hasModel) && !t.Config.Overwrite:
		found := checkpointFile
		if !hasCheckpoint {
			found = modelFile
		}
		return -1, fmt.Errorf("train: %s holds %s of another run: set Config.Resume to continue it or Config.Overwrite to start again", dir, found)
	case t.Config.Overwrite:
		// Nothing of the old run may stand for this one's, nor be resumed
		// with this one's metrics should it stop early.
		for _, name := range []string{checkpointFile, modelFile, bestFile} {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return -1, fmt.Errorf("train: %w", err)
			}
		}
	}
	return -1, nil
}

// canceled ends a run whose context was cancelled between steps; before
// this Run's first step there is nothing to save.
func (t *Trainer) canceled(cause error) error {
	if err := t.agree(nil); err != nil { // data-parallel: an error held back
		return errors.Join(fmt.Errorf("train: cancelled at step %d: %w", t.step, cause), err)
	}
	if t.step == t.startStep {
		return fmt.Errorf("train: cancelled before the first step (at step %d), no checkpoint or model written: %w", t.step, cause)
	}
	if t.Config.Dir != "" {
		if err := t.checkpoint(); err != nil {
			return errors.Join(fmt.Errorf("train: cancelled at step %d: %w", t.step, cause), err)
		}
		if err := t.writeModel(); err != nil {
			return errors.Join(fmt.Errorf("train: cancelled at step %d: %w", t.step, cause), err)
		}
		return fmt.Errorf("train: cancelled at step %d (checkpoint and model written in %s): %w", t.step, t.Config.Dir, cause)
	}
	return fmt.Errorf("train: cancelled at step %d: %w", t.step, cause)
}

func (t *Trainer) finish() (Result, error) {
	t.result.Steps = t.step
	t.result.EarlyStopped = t.stop
	if err := t.evaluate(); err != nil { // a no-op if this step was evaluated
		return t.result, err
	}
	if t.Config.Dir != "" {
		if err := t.writeModel(); err != nil {
			return t.result, err
		}
	}
	if err := t.agree(nil); err != nil { // data-parallel: an error held back
		return t.result, err
	}
	return t.result, nil
}

// trainStep runs the GradAccum batches from t.batch of epoch t.epoch and
// one optimizer step. Its phases are kept apart so that data-parallel
// training can reduce the gradients between accumulation and clipping.
func (t *Trainer) trainStep(ctx context.Context) error {
	step, epoch, batch := t.step+1, t.epoch, t.batch // t.step advances half way
	where := func(err error) error {
		return fmt.Errorf("train: step %d (epoch %d, batch %d): %w", step, epoch, batch, err)
	}
	start := time.Now()
	if t.Config.Schedule != nil {
		t.Optimizer.SetLR(t.Config.Schedule.LR(t.step))
	}
	// 1. Forward and backward on each batch, gradients summed.
	loss, grads, rows, err := t.accumulate()
	// 2. Data-parallel: loss and gradients averaged over the ranks, before
	// anything depends on their values.
	if t.par != nil {
		loss, err = t.reduce(ctx, loss, grads, err)
	}
	if err != nil {
		return where(err)
	}
	// 3. One global norm, measured and clipped on the accumulated gradient.
	maxNorm := t.Config.ClipNorm
	if maxNorm == 0 {
		maxNorm = math.Inf(1)
	}
	norm, err := optim.ClipGradNorm(grads, maxNorm)
	if err != nil {
		return where(err)
	}
	// 4. The update.
	if err := t.Optimizer.Step(t.params, grads); err != nil {
		return where(err)
	}
	t.step++
	t.sinceSum += loss
	t.sinceN++
	info := StepInfo{Step: t.step, Epoch: t.epoch, Batch: t.batch, Loss: loss, LR: t.Optimizer.LR(), GradNorm: norm}
	if t.metrics != nil {
		if err := t.hold(t.metrics.step(info)); err != nil {
			return where(err)
		}
	}
	t.progress.step(info, rows, time.Since(start))
	if t.Config.OnStep != nil {
		if err := t.Config.OnStep(t, info); err != nil {
			if err = t.hold(where(err)); err != nil {
				return err
			}
		}
	}
	if err := t.checkParams(); err != nil {
		return err
	}
	if t.Config.EvalEvery > 0 && t.step%t.Config.EvalEvery == 0 {
		if err := t.evaluate(); err != nil {
			return err
		}
	}
	if t.Config.CheckpointEvery > 0 && t.step%t.Config.CheckpointEvery == 0 {
		t.batch += t.Config.GradAccum // resume after this step's batches
		err := t.checkpoint()
		t.batch -= t.Config.GradAccum
		if err != nil {
			return err // names the step
		}
	}
	return nil
}

// accumulate runs forward and backward on the step's batches and returns
// their mean loss, the mean of their gradients (the machine's own tensors
// for a single batch) and the number of rows (or tokens) trained. The
// mean is accumulated as nanoGPT's loss/gradient_accumulation_steps is:
// each batch's gradient scaled by 1/GradAccum, then added in order.
//
// The graph's step, which keys dropout masks, counts training runs: the
// optimizer step times GradAccum plus the batch's place in the step, and
// in data-parallel training that times the ranks plus the rank, so that
// every rank and batch draws masks of its own, those of one process that
// accumulates the ranks' shares as its micro-batches.
//
// In data-parallel training each rank runs its rows of each batch,
// leaves a NaN for the exchange after the reduction to find (so that it
// reaches every rank), and hands the last batch's gradients to the
// Reducer as they become final (gradReady).
func (t *Trainer) accumulate() (loss float64, grads []*tensor.Dense, rows int, err error) {
	g, k := t.Model.Graph, t.Config.GradAccum
	g.SetTraining(true)
	lo, n, ranks, rank := 0, t.feeds.rows, 1, 0
	if p := t.par; p != nil {
		lo, ranks, rank = p.lo, p.size, p.rank
		defer func() { p.live = false }()
	}
	for j := range k {
		b, err := t.TrainData.Batch(t.epoch, t.batch+j)
		if err != nil {
			return 0, nil, 0, err
		}
		if err := t.feeds.check(b, true); err != nil {
			return 0, nil, 0, fmt.Errorf("batch %d: %w", t.batch+j, err)
		}
		if err := t.feeds.set(t.Machine, b, lo, n); err != nil {
			return 0, nil, 0, err
		}
		rows += t.count(b)
		g.SetStep((t.step*k+j)*ranks + rank)
		last := j == k-1
		if t.par != nil && last {
			t.par.live = true
		}
		l, gs, err := runGradients(t.Machine, t.par == nil)
		if err != nil {
			if k > 1 {
				err = fmt.Errorf("batch %d: %w", t.batch+j, err)
			}
			return 0, nil, 0, err
		}
		if k == 1 {
			return l, gs, rows, nil
		}
		loss += l
		if t.par != nil && last {
			break // gradReady added them
		}
		if err := t.addGrads(gs, j == 0); err != nil {
			return 0, nil, 0, err
		}
	}
	return loss / float64(k), t.acc, rows, nil
}

// addGrads adds gs, scaled by 1/GradAccum, to the accumulated gradients,
// or writes them in when first. A nil gradient (a parameter the loss does
// not use) stays nil.
func (t *Trainer) addGrads(gs []*tensor.Dense, first bool) error {
	if t.acc == nil {
		t.acc = make([]*tensor.Dense, len(gs))
	}
	for i, g := range gs {
		switch {
		case g == nil:
			if first {
				t.acc[i] = nil
			}
			continue
		case t.acc[i] == nil:
			t.acc[i] = g.Clone().(*tensor.Dense)
		}
		if err := addScaled(t.acc[i], g, 1/float64(t.Config.GradAccum), first); err != nil {
			return err
		}
	}
	return nil
}

// addScaled sets acc = g·c (first) or acc += g·c, the product rounded to
// the dtype before the sum (the conversion keeps the compiler from fusing
// them), as the data-parallel Reducer scales and sums the ranks' shares.
func addScaled(acc, g *tensor.Dense, c float64, first bool) error {
	switch a := acc.Data().(type) {
	case []float32:
		s, src := float32(c), g.Float32s()
		if len(src) != len(a) {
			return fmt.Errorf("accumulating a gradient of %d elements into %d", len(src), len(a))
		}
		if first {
			for j, v := range src {
				a[j] = v * s
			}
			return nil
		}
		for j, v := range src {
			a[j] += float32(v * s)
		}
	case []float64:
		src := g.Float64s()
		if len(src) != len(a) {
			return fmt.Errorf("accumulating a gradient of %d elements into %d", len(src), len(a))
		}
		if first {
			for j, v := range src {
				a[j] = v * c
			}
			return nil
		}
		for j, v := range src {
			a[j] += float64(v * c)
		}
	}
	return nil
}

// count is what a batch adds to the throughput: its tokens for a model of
// sequences of ids, its rows otherwise (the global batch's in
// data-parallel training).
func (t *Trainer) count(b datasets.Batch) int {
	if t.tokens {
		x, _ := b.Field("x")
		return product(x.Shape)
	}
	return t.feeds.train
}
