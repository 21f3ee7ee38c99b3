package train

import (
	"fmt"
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
// data. The metrics are flushed first, so they always cover the checkpoint.
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
	}
	if err := safetensors.Save(t.checkpointPath(), tensors, meta); err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	return nil
}

// resume restores a checkpoint written by checkpoint, if there is one.
func (t *Trainer) resume() error {
	path := t.checkpointPath()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	f, err := safetensors.Load(path)
	if err != nil {
		return fmt.Errorf("train: resume: %w", err)
	}
	if got := f.Metadata["format"]; got != checkpointFormat {
		return fmt.Errorf("train: resume: %s has format %q, want %q", path, got, checkpointFormat)
	}
	if got, want := f.Metadata["seed"], strconv.FormatUint(t.Model.Graph.Seed(), 10); got != want {
		return fmt.Errorf("train: resume: %s was written with seed %s, this run uses %s", path, got, want)
	}
	ints := map[string]*int{"step": &t.step, "epoch": &t.epoch, "batch": &t.batch, "loss_count": &t.sinceN}
	for key, dst := range ints {
		v, err := strconv.Atoi(f.Metadata[key])
		if err != nil || v < 0 {
			return fmt.Errorf("train: resume: %s: metadata %s = %q, want a count", path, key, f.Metadata[key])
		}
		*dst = v
	}
	if t.sinceSum, err = strconv.ParseFloat(f.Metadata["loss_sum"], 64); err != nil {
		return fmt.Errorf("train: resume: %s: metadata loss_sum = %q", path, f.Metadata["loss_sum"])
	}
	var state []graph.NamedTensor
	for _, nt := range f.Tensors {
		if name, ok := strings.CutPrefix(nt.Name, optimizerPrefix); ok {
			state = append(state, graph.NamedTensor{Name: name, Value: nt.Value})
		}
	}
	if err := f.CopyInto(t.params, optimizerPrefix); err != nil {
		return fmt.Errorf("train: resume: %w", err)
	}
	if err := t.Optimizer.LoadState(t.params, state); err != nil {
		return fmt.Errorf("train: resume: %s: %w", path, err)
	}
	if lr, err := strconv.ParseFloat(f.Metadata["lr"], 64); err == nil {
		t.Optimizer.SetLR(lr)
	}
	return nil
}

func saveModel(path string, params []graph.NamedTensor) error {
	if err := safetensors.Save(path, params, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// SaveWeights writes g's parameters to path as a PyTorch state_dict in
// safetensors format (torch: model.load_state_dict(load_file(path))).
func SaveWeights(path string, g *graph.Graph) error { return saveModel(path, g.ParamTensors()) }

// LoadWeights initializes g's parameters from a safetensors file written by
// SaveWeights, by a checkpoint (its optimizer state is ignored) or by
// PyTorch (safetensors.torch.save_file(model.state_dict(), path)). Names and
// shapes must match; float32 and float64 are converted.
func LoadWeights(path string, g *graph.Graph) error {
	f, err := safetensors.Load(path)
	if err != nil {
		return err
	}
	return f.CopyInto(g.ParamTensors(), optimizerPrefix)
}
