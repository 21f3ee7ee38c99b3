package train

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/safetensors"
)

const (
	checkpointFormat = "gelu-train/1"
	optimizerPrefix  = "optimizer."
)

func (t *Trainer) checkpointPath() string {
	return filepath.Join(t.Config.Dir, "checkpoint.safetensors")
}

// checkpoint writes parameters, optimizer state and the position in the
// data. The metrics are flushed first, so they always cover the checkpoint;
// last_eval tells a resumed run which evaluation rows the checkpoint covers
// (an epoch end's evaluation is flushed before its checkpoint is renamed
// into place, so a crash in between must not keep that row and evaluate
// the same step again).
func (t *Trainer) checkpoint() error {
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
	}
	if err := safetensors.Save(t.checkpointPath(), tensors, meta); err != nil {
		return fmt.Errorf("train: checkpoint at step %d: %w", t.step, err)
	}
	return nil
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
}

// runShape is what a checkpoint's metadata is checked against.
type runShape struct {
	seed            uint64
	batchesPerEpoch int
	epochs          int
	maxSteps        int // 0: no limit
}

// parseResume reads and validates checkpoint metadata against the run.
//
// These must agree with the run: format; seed (it drives the data order
// and dropout); the position, step = epoch·batchesPerEpoch + batch with
// batch ≤ batchesPerEpoch (another batch size or data set would resume in
// the wrong place); epoch ≤ Config.Epochs and step ≤ Config.MaxSteps (a
// checkpoint past the end would train nothing yet write a model); the loss
// count is the steps since the last evaluation and the loss sum is finite;
// lr is finite and ≥ 0; last_eval is between −1 and step.
//
// These may legitimately differ, so they are not checked: Epochs and
// MaxSteps beyond the checkpoint (to train longer), EvalEvery,
// CheckpointEvery, EvalAtStart, ClipNorm, Quiet and the hooks (they shape
// what is recorded, not the state), and Schedule (the checkpoint's lr is
// restored; a Schedule sets the next step's rate anyway).
func parseResume(meta map[string]string, run runShape) (resumeState, error) {
	var s resumeState
	if got := meta["format"]; got != checkpointFormat {
		return s, fmt.Errorf("format %q, want %q", got, checkpointFormat)
	}
	if got, want := meta["seed"], strconv.FormatUint(run.seed, 10); got != want {
		return s, fmt.Errorf("written with seed %q, this run uses %s", got, want)
	}
	count := func(key string) (int, error) {
		v, err := strconv.Atoi(meta[key])
		if err != nil || v < 0 {
			return 0, fmt.Errorf("metadata %s = %q, want a count", key, meta[key])
		}
		return v, nil
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
	nb := run.batchesPerEpoch
	switch {
	case nb <= 0:
		return s, fmt.Errorf("the training data has %d batches per epoch", nb)
	case s.epoch > run.epochs:
		return s, fmt.Errorf("checkpoint is at epoch %d, but the run has %d epochs", s.epoch, run.epochs)
	case s.batch > nb:
		return s, fmt.Errorf("checkpoint is at batch %d of epoch %d, but an epoch has %d batches (other data or batch size?)", s.batch, s.epoch, nb)
	case s.epoch == run.epochs && s.batch != 0:
		return s, fmt.Errorf("checkpoint is at batch %d of epoch %d, past the run's %d epochs", s.batch, s.epoch, run.epochs)
	case (s.step-s.batch)%nb != 0 || (s.step-s.batch)/nb != s.epoch:
		return s, fmt.Errorf("checkpoint step %d does not match epoch %d, batch %d at %d batches per epoch (other data or batch size?)", s.step, s.epoch, s.batch, nb)
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
	return s, nil
}

// resume restores a checkpoint written by checkpoint, if there is one, and
// returns the step of the last evaluation whose metrics rows the
// checkpoint covers. Nothing is changed unless the metadata is valid.
func (t *Trainer) resume() (evalsUpTo int, err error) {
	path := t.checkpointPath()
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	f, err := safetensors.Load(path)
	if err != nil {
		return 0, fmt.Errorf("train: resume: %w", err)
	}
	s, err := parseResume(f.Metadata, runShape{seed: t.Model.Graph.Seed(), batchesPerEpoch: t.TrainData.NumBatches(),
		epochs: t.Config.Epochs, maxSteps: t.Config.MaxSteps})
	if err != nil {
		return 0, fmt.Errorf("train: resume: %s: %w", path, err)
	}
	var state []graph.NamedTensor
	for _, nt := range f.Tensors {
		if name, ok := strings.CutPrefix(nt.Name, optimizerPrefix); ok {
			state = append(state, graph.NamedTensor{Name: name, Value: nt.Value})
		}
	}
	if err := f.CopyInto(t.params, optimizerPrefix); err != nil {
		return 0, fmt.Errorf("train: resume: %w", err)
	}
	if err := t.Optimizer.LoadState(t.params, state); err != nil {
		return 0, fmt.Errorf("train: resume: %s: %w", path, err)
	}
	t.step, t.epoch, t.batch = s.step, s.epoch, s.batch
	t.sinceSum, t.sinceN = s.lossSum, s.lossCount
	t.Optimizer.SetLR(s.lr)
	t.lastEval = s.lastEval
	return s.lastEval, nil
}

func saveModel(path string, params []graph.NamedTensor) error {
	if err := safetensors.Save(path, params, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}
