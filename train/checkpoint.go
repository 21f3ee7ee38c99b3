package train

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/safetensors"
)

const (
	checkpointFormat = "gelu-train/1"
	optimizerPrefix  = "optimizer."
	checkpointFile   = "checkpoint.safetensors"
	modelFile        = "model.safetensors"
	bestFile         = "best.safetensors"
)

func (t *Trainer) checkpointPath() string {
	return filepath.Join(t.Config.Dir, checkpointFile)
}

// checkpoint writes parameters, optimizer state and the position in the
// data. The metrics are flushed first, so they always cover the checkpoint;
// last_eval tells a resumed run which evaluation rows the checkpoint covers
// (an epoch end's evaluation is flushed before its checkpoint is renamed
// into place, so a crash in between must not keep that row and evaluate
// the same step again).
func (t *Trainer) checkpoint() error {
	if t.par != nil {
		var err error
		if t.writes() {
			err = t.writeCheckpoint()
		}
		return t.agree(err)
	}
	return t.writeCheckpoint()
}

// writeCheckpoint is checkpoint's writing.
func (t *Trainer) writeCheckpoint() error {
	if t.metrics != nil {
		if err := t.metrics.flush(); err != nil {
			return err
		}
	}
	tensors := append([]graph.NamedTensor(nil), t.params...)
	for _, s := range t.Optimizer.State() {
		tensors = append(tensors, graph.NamedTensor{Name: optimizerPrefix + s.Name, Value: s.Value})
	}
	meta := map[string]string{
		"format":     checkpointFormat,
		"step":       strconv.Itoa(t.step),
		"epoch":      strconv.Itoa(t.epoch),
		"batch":      strconv.Itoa(t.batch),
		"loss_sum":   strconv.FormatFloat(t.sinceSum, 'g', -1, 64),
		"loss_count": strconv.Itoa(t.sinceN),
		"seed":       strconv.FormatUint(t.Model.Graph.Seed(), 10),
		"lr":         strconv.FormatFloat(t.Optimizer.LR(), 'g', -1, 64),
		"last_eval":  strconv.Itoa(t.lastEval),
		"optimizer":  optimizerName(t.Optimizer),
	}
	// Keys a run without these features does not write, so that its
	// checkpoints stay as they were: grad_accum without accumulation, the
	// best without validation data.
	if k := t.Config.GradAccum; k > 1 {
		meta["grad_accum"] = strconv.Itoa(k)
	}
	if t.monitor.on {
		meta["monitor"] = t.monitor.name
		meta["best"] = strconv.FormatFloat(t.best, 'g', -1, 64)
		meta["best_step"] = strconv.Itoa(t.bestStep)
		meta["stale_evals"] = strconv.Itoa(t.stale)
	}
	if err := t.addArgs(meta); err != nil {
		return err
	}
	if err := safetensors.Save(t.checkpointPath(), tensors, meta); err != nil {
		return fmt.Errorf("train: checkpoint at step %d: %w", t.step, err)
	}
	return nil
}

// addArgs puts Model.Args into meta as "model_args", a JSON object with
// sorted keys.
func (t *Trainer) addArgs(meta map[string]string) error {
	if t.Model.Args == nil {
		return nil
	}
	args, err := modelArgsJSON(t.Model.Args)
	if err != nil {
		return fmt.Errorf("train: Model.Args: %w", err)
	}
	meta[modelArgsKey] = args
	return nil
}

// writeModel writes Dir/model.safetensors (see saveWeights).
func (t *Trainer) writeModel() error {
	var err error
	if t.writes() {
		err = t.saveWeights(filepath.Join(t.Config.Dir, modelFile), nil)
	}
	return t.agree(err)
}

// saveWeights writes the model to path with the metadata of a PyTorch
// state_dict file, Model.Args and extra: Model.Module's state dict, which
// its PyTorch counterpart's load_state_dict reads as it is, or without a
// Module every parameter under its graph name.
func (t *Trainer) saveWeights(path string, extra map[string]string) error {
	meta := map[string]string{"format": "pt"}
	for k, v := range extra {
		meta[k] = v
	}
	if err := t.addArgs(meta); err != nil {
		return err
	}
	tensors := t.params
	if t.Model.Module != nil {
		sd, err := nn.StateDict(t.Model.Module, t.Model.StateDict...)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		tensors = sd
	}
	if err := safetensors.Save(path, tensors, meta); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// optimizerName names the kind of o in checkpoints and errors.
func optimizerName(o optim.Optimizer) string {
	switch o := o.(type) {
	case *optim.Adam:
		if o.Decoupled {
			return "optim.AdamW"
		}
		return "optim.Adam"
	case *optim.SGD:
		return "optim.SGD"
	}
	return fmt.Sprintf("%T", o)
}

// resumeState is the position and running sums a checkpoint restores.
type resumeState struct {
	step, epoch, batch int
	lossSum            float64
	lossCount          int
	lr                 float64
	// lastEval is the step of the last evaluation the checkpoint covers,
	// −1 for none.
	lastEval int
	// The monitored metric's best value, its step and the evaluations
	// since (hasBest: the checkpoint records them).
	hasBest         bool
	best            float64
	bestStep, stale int
}

// runShape is what a checkpoint's metadata is checked against.
type runShape struct {
	seed            uint64
	batchesPerEpoch int
	gradAccum       int
	epochs          int
	maxSteps        int    // 0: no limit
	monitor         string // "" when nothing is monitored
	args            map[string]string
	allowArgs       bool
}

// parseResume reads and validates checkpoint metadata against the run.
//
// These must agree with the run: format; seed (it drives the data order
// and dropout); GradAccum (grad_accum, 1 when absent), as it changes what
// a step is; the position, step = epoch·S + batch/GradAccum with S =
// ⌊batchesPerEpoch/GradAccum⌋ steps an epoch and batch a multiple of
// GradAccum up to S·GradAccum (another batch size or data set would
// resume in the wrong place); epoch ≤ Config.Epochs and step ≤
// Config.MaxSteps (a checkpoint past the end would train nothing yet write
// a model); the loss count is the steps since the last evaluation and the
// loss sum is finite; lr is finite and ≥ 0; last_eval is between −1 and
// step; model_args equal Model.Args (unless Config.AllowArgsMismatch); the
// monitored metric, when both record one (a checkpoint without it starts
// the watch afresh).
//
// These may legitimately differ, so they are not checked: Epochs and
// MaxSteps beyond the checkpoint (to train longer), EvalEvery,
// CheckpointEvery, EvalAtStart, ClipNorm, Patience, SaveBest, Quiet and
// the hooks (they shape what is recorded, not the state), and Schedule
// (the checkpoint's lr is restored; a Schedule sets the next step's rate
// anyway).
func parseResume(meta map[string]string, run runShape) (resumeState, error) {
	var s resumeState
	if got := meta["format"]; got != checkpointFormat {
		return s, fmt.Errorf("format %q, want %q", got, checkpointFormat)
	}
	if got, want := meta["seed"], strconv.FormatUint(run.seed, 10); got != want {
		if _, err := strconv.ParseUint(got, 10, 64); err != nil {
			return s, fmt.Errorf("metadata seed = %q, want the graph's seed, a number", got)
		}
		return s, fmt.Errorf("the checkpoint was written with graph seed %s, this run's graph has seed %s (the seed keys the dropout masks: the run would not continue as it began): build the graph with graph.New(dtype, %s) to resume it, or set Config.Overwrite to start again", got, want, got)
	}
	if err := compareArgs(meta, run.args); err != nil && !run.allowArgs {
		return s, err
	}
	count := func(key string) (int, error) {
		v, err := strconv.Atoi(meta[key])
		if err != nil || v < 0 {
			return 0, fmt.Errorf("metadata %s = %q, want a count", key, meta[key])
		}
		return v, nil
	}
	accum := 1
	if v, ok := meta["grad_accum"]; ok {
		if a, err := strconv.Atoi(v); err != nil || a < 1 {
			return s, fmt.Errorf("metadata grad_accum = %q, want a count ≥ 1", v)
		} else {
			accum = a
		}
	}
	if accum != run.gradAccum {
		return s, fmt.Errorf("checkpoint was written with GradAccum %d, this run has %d", accum, run.gradAccum)
	}
	var err error
	for _, f := range []struct {
		key string
		dst *int
	}{{"step", &s.step}, {"epoch", &s.epoch}, {"batch", &s.batch}, {"loss_count", &s.lossCount}} {
		if *f.dst, err = count(f.key); err != nil {
			return s, err
		}
	}
	nb := run.batchesPerEpoch / accum // steps per epoch
	switch {
	case nb <= 0:
		return s, fmt.Errorf("the training data has %d batches per epoch for steps of %d", run.batchesPerEpoch, accum)
	case s.epoch > run.epochs:
		return s, fmt.Errorf("checkpoint is at epoch %d, but the run has %d epochs", s.epoch, run.epochs)
	case s.batch > nb*accum || s.batch%accum != 0:
		return s, fmt.Errorf("checkpoint is at batch %d of epoch %d, but an epoch has %d batches in steps of %d (other data or batch size?)", s.batch, s.epoch, run.batchesPerEpoch, accum)
	case s.epoch == run.epochs && s.batch != 0:
		return s, fmt.Errorf("checkpoint is at batch %d of epoch %d, past the run's %d epochs", s.batch, s.epoch, run.epochs)
	case (s.step-s.batch/accum)%nb != 0 || (s.step-s.batch/accum)/nb != s.epoch:
		return s, fmt.Errorf("checkpoint step %d does not match epoch %d, batch %d at %d batches per epoch (other data or batch size?)", s.step, s.epoch, s.batch, run.batchesPerEpoch)
	case run.maxSteps > 0 && s.step > run.maxSteps:
		return s, fmt.Errorf("checkpoint is at step %d, past this run's MaxSteps %d", s.step, run.maxSteps)
	}
	if s.lossCount > s.step {
		return s, fmt.Errorf("metadata loss_count = %d, more than the %d steps done", s.lossCount, s.step)
	}
	// Each evaluation resets the loss count, so a checkpoint written before
	// last_eval was recorded implies it.
	s.lastEval = s.step - s.lossCount
	if v, ok := meta["last_eval"]; ok {
		if s.lastEval, err = strconv.Atoi(v); err != nil || s.lastEval < -1 || s.lastEval > s.step {
			return s, fmt.Errorf("metadata last_eval = %q, want a step from -1 to %d", v, s.step)
		}
		if want := s.step - max(s.lastEval, 0); s.lossCount != want {
			return s, fmt.Errorf("metadata loss_count = %d, want %d (the steps since the evaluation at step %d)", s.lossCount, want, s.lastEval)
		}
	}
	if s.lossSum, err = strconv.ParseFloat(meta["loss_sum"], 64); err != nil || math.IsNaN(s.lossSum) || math.IsInf(s.lossSum, 0) {
		return s, fmt.Errorf("metadata loss_sum = %q, want a finite number", meta["loss_sum"])
	}
	if s.lossCount == 0 && s.lossSum != 0 {
		return s, fmt.Errorf("metadata loss_sum = %q with loss_count 0, want 0", meta["loss_sum"])
	}
	if s.lr, err = strconv.ParseFloat(meta["lr"], 64); err != nil || !(s.lr >= 0) || math.IsInf(s.lr, 0) {
		return s, fmt.Errorf("metadata lr = %q, want a finite learning rate ≥ 0", meta["lr"])
	}
	if m, ok := meta["monitor"]; ok && run.monitor != "" {
		if m != run.monitor {
			return s, fmt.Errorf("checkpoint monitors %q, this run %q: set Config.Monitor = %q to resume it", m, run.monitor, m)
		}
		s.hasBest = true
		if s.best, err = strconv.ParseFloat(meta["best"], 64); err != nil || math.IsNaN(s.best) {
			return s, fmt.Errorf("metadata best = %q, want a number", meta["best"])
		}
		if s.bestStep, err = strconv.Atoi(meta["best_step"]); err != nil || s.bestStep < -1 || s.bestStep > s.lastEval {
			return s, fmt.Errorf("metadata best_step = %q, want a step from -1 to the last evaluation's, %d", meta["best_step"], s.lastEval)
		}
		if s.stale, err = count("stale_evals"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// compareArgs compares the checkpoint's model_args with the run's,
// naming every difference: a checkpoint without model_args fits only a
// run without Model.Args.
func compareArgs(meta map[string]string, args map[string]string) error {
	diffs, err := modelArgsDiff(meta, args, "checkpoint")
	if err != nil || diffs == nil {
		return err
	}
	return fmt.Errorf("model_args differ (set Config.AllowArgsMismatch to resume anyway): %s", strings.Join(diffs, "; "))
}

// resume restores Dir's checkpoint, written by checkpoint, and returns the
// step of the last evaluation whose metrics rows the checkpoint covers.
// Everything is checked before anything changes: the file, its
// metadata, every parameter's name, shape, dtype and values, and the
// optimizer state (optim.Optimizer.LoadState validates it all before it
// loads); a refused checkpoint leaves the model and the optimizer as they
// were.
func (t *Trainer) resume() (evalsUpTo int, err error) {
	path := t.checkpointPath()
	f, err := safetensors.Load(path)
	if err != nil {
		return 0, fmt.Errorf("train: resume: %w", err)
	}
	mon := ""
	if t.monitor.on {
		mon = t.monitor.name
	}
	s, err := parseResume(f.Metadata, runShape{seed: t.Model.Graph.Seed(), batchesPerEpoch: t.TrainData.NumBatches(),
		gradAccum: t.Config.GradAccum, epochs: t.Config.Epochs, maxSteps: t.Config.MaxSteps, monitor: mon,
		args: t.Model.Args, allowArgs: t.Config.AllowArgsMismatch})
	if err != nil {
		return 0, fmt.Errorf("train: resume: %s: %w", path, err)
	}
	if err := checkParams(f, t.params); err != nil {
		return 0, fmt.Errorf("train: resume: %s: %w", path, err)
	}
	var state []graph.NamedTensor
	for _, nt := range f.Tensors {
		if name, ok := strings.CutPrefix(nt.Name, optimizerPrefix); ok {
			state = append(state, graph.NamedTensor{Name: name, Value: nt.Value})
		}
	}
	if err := t.Optimizer.LoadState(t.params, state); err != nil {
		if saved, this := f.Metadata["optimizer"], optimizerName(t.Optimizer); saved != "" && saved != this {
			return 0, fmt.Errorf("train: resume: %s: the checkpoint holds %s's state, this run uses %s: resume with %s (its settings may change), or set Config.Overwrite to start again (%w)", path, saved, this, saved, err)
		}
		return 0, fmt.Errorf("train: resume: %s: %w", path, err)
	}
	// checkParams made sure this copy cannot fail half way.
	if err := f.CopyInto(t.params, optimizerPrefix); err != nil {
		return 0, fmt.Errorf("train: resume: %w", err)
	}
	graph.MarkParamsChanged() // caches computed from the weights (nn.KVCache) start again
	t.step, t.epoch, t.batch = s.step, s.epoch, s.batch
	t.sinceSum, t.sinceN = s.lossSum, s.lossCount
	t.Optimizer.SetLR(s.lr)
	t.lastEval = s.lastEval
	if s.hasBest {
		t.best, t.bestStep, t.stale = s.best, s.bestStep, s.stale
	}
	return s.lastEval, nil
}

// checkParams checks that f holds every parameter with its name, shape
// and dtype and finite values, and no other tensor but the optimizer's.
func checkParams(f *safetensors.File, params []graph.NamedTensor) error {
	want := map[string]bool{}
	for _, p := range params {
		want[p.Name] = true
		v, ok := f.Get(p.Name)
		switch {
		case !ok:
			return fmt.Errorf("no tensor %q (model expects %v%v)", p.Name, p.Value.Dtype(), p.Value.Shape())
		case !graph.SameShape(v.Shape(), p.Value.Shape()):
			return fmt.Errorf("%q has shape %v, model expects %v", p.Name, v.Shape(), p.Value.Shape())
		case v.Dtype() != p.Value.Dtype():
			return fmt.Errorf("%q is %v, the model's is %v (a checkpoint resumes at its own precision)", p.Name, v.Dtype(), p.Value.Dtype())
		}
		for i, x := range graph.Float64s(v) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%q element %d is %v", p.Name, i, x)
			}
		}
	}
	for _, nt := range f.Tensors {
		if !want[nt.Name] && !strings.HasPrefix(nt.Name, optimizerPrefix) {
			return fmt.Errorf("has tensor %q that the model does not have", nt.Name)
		}
	}
	return nil
}

func saveModel(path string, params []graph.NamedTensor) error {
	if err := safetensors.Save(path, params, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}
