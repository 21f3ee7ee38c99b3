package train_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// A bad setting is named, with what it should be, not shown as the whole
// Config.
func TestNewNamesTheBadSetting(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	for _, c := range []struct {
		cfg  train.Config
		want string
	}{
		{train.Config{Epochs: -1}, "Config.Epochs = -1, want ≥ 0"},
		{train.Config{MaxSteps: -2}, "Config.MaxSteps = -2, want ≥ 0"},
		{train.Config{EvalEvery: -1}, "Config.EvalEvery = -1, want ≥ 0"},
		{train.Config{CheckpointEvery: -1, Dir: t.TempDir()}, "Config.CheckpointEvery = -1, want ≥ 0"},
		{train.Config{GradAccum: -3}, "Config.GradAccum = -3, want ≥ 0"},
		{train.Config{Patience: -1}, "Config.Patience = -1, want ≥ 0"},
		{train.Config{ClipNorm: math.NaN()}, "Config.ClipNorm = NaN, want ≥ 0"},
		{train.Config{ClipNorm: -1}, "Config.ClipNorm = -1, want ≥ 0"},
	} {
		_, err := train.New(s.model, s.opt, s.trainData, s.valData, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "{") {
			t.Errorf("got %v, want an error naming the field: %q", err, c.want)
		}
	}
}

// Resuming with another graph seed or another optimizer says what differs
// and how to fix it.
func TestResumeNamesWhatDiffers(t *testing.T) {
	base := t.TempDir()
	s := regression(t, tensor.Float64, regressionData(1))
	s.opt = optim.NewAdamW(0.01)
	if _, err := run(t, s, train.Config{MaxSteps: 2, CheckpointEvery: 2, Dir: base}); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(base, "checkpoint.safetensors")

	dir := t.TempDir()
	rewriteCheckpoint(t, ckpt, filepath.Join(dir, "checkpoint.safetensors"), map[string]string{"seed": "2"})
	s = regression(t, tensor.Float64, regressionData(1))
	s.opt = optim.NewAdamW(0.01)
	_, err := run(t, s, train.Config{MaxSteps: 4, Dir: dir, Resume: true})
	t.Log(err)
	for _, want := range []string{"graph seed 2", "this run's graph has seed 11", "graph.New(dtype, 2)", "Config.Overwrite"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("another seed: %v\nwant it to say %s", err, want)
		}
	}

	for _, old := range []map[string]string{nil, {"optimizer": ""}} { // with the optimizer recorded, and without
		dir = t.TempDir()
		rewriteCheckpoint(t, ckpt, filepath.Join(dir, "checkpoint.safetensors"), old)
		sgd := regression(t, tensor.Float64, regressionData(1)) // SGD with momentum
		_, err = run(t, sgd, train.Config{MaxSteps: 4, Dir: dir, Resume: true})
		want := []string{"optim.AdamW's state", "this run uses optim.SGD"}
		if old != nil { // an older checkpoint: told by the state's keys
			want = []string{"optim.Adam's or optim.AdamW's", "optim.SGD"}
		}
		t.Log(err)
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("an AdamW checkpoint (optimizer recorded: %v) resumed with SGD: %v\nwant it to say %s", old == nil, err, w)
			}
		}
	}
}
