package train_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

// noPanic runs f and turns a panic into an error, so a test reports it
// instead of dying.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}

func TestWeightsWithNilGraphAreErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := noPanic(func() error { return train.SaveGraphWeights(p, nil) }); err == nil || strings.Contains(err.Error(), "PANIC") {
		t.Errorf("SaveWeights(nil graph): got %v, want an error", err)
	}
	os.WriteFile(p, []byte("x"), 0o644)
	if err := noPanic(func() error { return train.LoadGraphWeights(p, nil) }); err == nil || !strings.Contains(err.Error(), "nil graph") {
		t.Errorf("LoadWeights(nil graph): got %v, want a nil-graph error", err)
	}
}

// A tensor whose shape product overflows (wrapping to 0 bytes) is an
// error from LoadWeights and from resume, not a panic.
func TestOverflowingShapeIsAnErrorForWeightsAndResume(t *testing.T) {
	s := regression(t, tensor.Float32, regressionData(1))
	header := fmt.Sprintf(`{"__metadata__":{"format":"gelu-train/1","seed":"11","step":"1","epoch":"0","batch":"1","loss_sum":"0","loss_count":"1","lr":"0.05"},`+
		`"mlp.fc0.weight":{"dtype":"F32","shape":[%d,2],"data_offsets":[0,0]}}`, int64(1)<<62)
	raw := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	raw = append(raw, header...)
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.safetensors")
	os.WriteFile(path, raw, 0o644)
	err := noPanic(func() error { return train.LoadGraphWeights(path, s.model.Graph) })
	if err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("LoadWeights: got %v, want an overflow error", err)
	}
	err = noPanic(func() error { _, err := run(t, s, train.Config{Dir: dir, Resume: true}); return err })
	if err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("resume: got %v, want an overflow error", err)
	}
}

// rewriteCheckpoint saves src's tensors to dst with metadata changed by
// edit (a value "" deletes the key).
func rewriteCheckpoint(t *testing.T, src, dst string, edit map[string]string) {
	t.Helper()
	f, err := safetensors.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for k, v := range f.Metadata {
		meta[k] = v
	}
	for k, v := range edit {
		if v == "" {
			delete(meta, k)
		} else {
			meta[k] = v
		}
	}
	if err := safetensors.Save(dst, f.Tensors, meta); err != nil {
		t.Fatal(err)
	}
}

// Resume metadata must agree with the run's data and configuration: a
// checkpoint claiming an absurd batch or epoch is refused, naming the
// field, instead of silently skipping training and writing a model.
// (The base checkpoint is at step 4 = epoch 0, batch 4 of 6.)
func TestResumeRejectsImplausibleMetadata(t *testing.T) {
	base := t.TempDir()
	cfg := train.Config{Epochs: 2, CheckpointEvery: 2, EvalEvery: 3}
	cfg.Dir, cfg.MaxSteps = base, 4
	if _, err := runFresh(t, cfg); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(base, "checkpoint.safetensors")
	cases := []struct {
		name     string
		edit     map[string]string
		maxSteps int
		want     string
	}{
		{"huge batch", map[string]string{"batch": "1000000", "step": "1000000"}, 0, "batch 1000000"},
		{"huge epoch", map[string]string{"epoch": "1000000", "step": "6000004"}, 0, "epoch 1000000"},
		{"epoch past the end", map[string]string{"epoch": "2", "step": "16"}, 0, "epoch 2"},
		{"step mismatch", map[string]string{"step": "5"}, 0, "step 5"},
		{"step past MaxSteps", nil, 3, "MaxSteps 3"},
		{"negative step", map[string]string{"step": "-1"}, 0, "step"},
		{"step not a number", map[string]string{"step": "4x"}, 0, "step"},
		{"loss_count above steps", map[string]string{"loss_count": "5"}, 0, "loss_count"},
		{"loss_count vs last_eval", map[string]string{"loss_count": "2"}, 0, "loss_count = 2, want 1"},
		{"loss_sum NaN", map[string]string{"loss_sum": "NaN"}, 0, "loss_sum"},
		{"loss_sum overflows", map[string]string{"loss_sum": "1e999"}, 0, "loss_sum"},
		{"negative lr", map[string]string{"lr": "-1"}, 0, "lr"},
		{"NaN lr", map[string]string{"lr": "NaN"}, 0, "lr"},
		{"missing lr", map[string]string{"lr": ""}, 0, "lr"},
		{"last_eval in the future", map[string]string{"last_eval": "9"}, 0, "last_eval"},
		{"format", map[string]string{"format": "gelu-train/0"}, 0, "format"},
		{"seed", map[string]string{"seed": "12"}, 0, "seed"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		rewriteCheckpoint(t, ckpt, filepath.Join(dir, "checkpoint.safetensors"), c.edit)
		cfg := train.Config{Epochs: 2, CheckpointEvery: 2, EvalEvery: 3, Dir: dir, Resume: true, MaxSteps: c.maxSteps}
		_, err := runFresh(t, cfg)
		t.Logf("%s: %v", c.name, err)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "resume") {
			t.Errorf("%s: got %v, want a resume error containing %q", c.name, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
			t.Errorf("%s: a model was written from a refused checkpoint", c.name)
		}
	}
	// What may differ: more epochs, a later MaxSteps (the base run stopped
	// at 4 of them), other evaluation and checkpoint intervals.
	dir := t.TempDir()
	rewriteCheckpoint(t, ckpt, filepath.Join(dir, "checkpoint.safetensors"), nil)
	res, err := runFresh(t, train.Config{Epochs: 3, EvalEvery: 5, Dir: dir, Resume: true})
	if err != nil || res.Steps != 18 {
		t.Errorf("resume with more epochs: %v after %d steps, want 18 steps", err, res.Steps)
	}
}

// A kill between an epoch end's evaluation (flushed to evals.*) and its
// checkpoint must not leave a duplicate evaluation row once the run is
// resumed: the files equal those of an uninterrupted run. The OnEval hook
// failing at the epoch end stands in for the kill.
func TestKillAtEpochEndLeavesNoDuplicateEvals(t *testing.T) {
	cfg := train.Config{Epochs: 2, CheckpointEvery: 1}
	checkResumedRun(t, "after a kill at the epoch end", cfg, func(t *testing.T, killed train.Config) {
		killed.OnEval = func(_ *train.Trainer, e train.EvalInfo) error {
			if e.Step == 6 {
				return fmt.Errorf("killed")
			}
			return nil
		}
		if _, err := runFresh(t, killed); err == nil {
			t.Fatal("the simulated kill did not stop the run")
		}
	}, "evals.csv", "evals.jsonl", "steps.csv", "steps.jsonl", "model.safetensors", "checkpoint.safetensors")
}

// Temporary files a killed checkpoint or model write left behind are
// removed by the next write of the same file.
func TestOrphanedTemporariesAreCleaned(t *testing.T) {
	dir := t.TempDir()
	orphans := []string{".checkpoint.safetensors.tmp123456", ".checkpoint.safetensors.tmp-42", ".model.safetensors.tmp-7"}
	for _, n := range orphans {
		os.WriteFile(filepath.Join(dir, n), []byte("half a checkpoint"), 0o644)
	}
	if _, err := run(t, regression(t, tensor.Float32, regressionData(1)), train.Config{MaxSteps: 2, CheckpointEvery: 1, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	for _, n := range orphans {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("orphan %s survived the next write", n)
		}
	}
}

// A checkpoint that cannot be written names the step it was saving.
func TestFailedCheckpointNamesItsStep(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "checkpoint.safetensors")
	cfg := train.Config{Epochs: 1, CheckpointEvery: 1, Dir: dir,
		OnStep: func(_ *train.Trainer, s train.StepInfo) error {
			if s.Step == 3 { // a directory where the checkpoint goes: the rename fails
				os.Remove(ckpt)
				return os.Mkdir(ckpt, 0o755)
			}
			return nil
		}}
	_, err := run(t, regression(t, tensor.Float32, regressionData(1)), cfg)
	if err == nil || !strings.Contains(err.Error(), "step 3") || strings.Contains(err.Error(), "step 4") {
		t.Errorf("got %v, want an error naming step 3 (and not step 4)", err)
	}
}

// A kill in the middle of a metrics write leaves a last line without its
// newline; resuming drops it instead of refusing the file as unreadable.
func TestTornMetricsLineIsDropped(t *testing.T) {
	cfg := train.Config{Epochs: 1, CheckpointEvery: 2, EvalEvery: 3}
	checkResumedRun(t, "over a torn line", cfg, func(t *testing.T, cfg train.Config) {
		cfg.MaxSteps = 4
		if _, err := runFresh(t, cfg); err != nil {
			t.Fatal(err)
		}
		for name, torn := range map[string]string{"steps.csv": "5,0,4,0.3", "steps.jsonl": `{"st`, "evals.csv": "6,", "evals.jsonl": `{"step":6,"ep`} {
			f, err := os.OpenFile(filepath.Join(cfg.Dir, name), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(torn)
			f.Close()
		}
	}, "steps.csv", "steps.jsonl", "evals.csv", "evals.jsonl")
}

// Evaluate and Run on a nil loader, a nil Trainer or one not made by New
// are errors that say so, not panics.
func TestNilTrainerAndLoaderAreErrors(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	tr, err := train.New(s.model, s.opt, s.trainData, s.valData, train.Config{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	var nilTrainer *train.Trainer
	for _, c := range []struct {
		name string
		f    func() error
		want string
	}{
		{"Evaluate(nil)", func() error { _, err := tr.Evaluate(nil); return err }, "train.Evaluate: nil data"},
		{"nil Trainer Evaluate", func() error { _, err := nilTrainer.Evaluate(s.valData); return err }, "not made by train.New"},
		{"nil Trainer Run", func() error { _, err := nilTrainer.Run(context.Background()); return err }, "not made by train.New"},
		{"zero Trainer Run", func() error { _, err := (&train.Trainer{}).Run(context.Background()); return err }, "not made by train.New"},
	} {
		if err := noPanic(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if n := nilTrainer.Step(); n != 0 {
		t.Errorf("nil Trainer Step() = %d, want 0", n)
	}
}

// MaxSteps near MaxInt gives ⌈MaxSteps/batches⌉ epochs, not a negative
// count from an overflowing sum (which silently trained nothing).
func TestHugeMaxStepsDoesNotOverflowEpochs(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	tr, err := train.New(s.model, s.opt, s.trainData, s.valData, train.Config{Quiet: true, MaxSteps: math.MaxInt})
	if err != nil {
		t.Fatal(err)
	}
	nb := big.NewInt(int64(s.trainData.NumBatches()))
	want := new(big.Int).Add(big.NewInt(math.MaxInt), nb)
	want.Sub(want, big.NewInt(1)).Quo(want, nb)
	if got := big.NewInt(int64(tr.Config.Epochs)); got.Cmp(want) != 0 {
		t.Errorf("Epochs = %v, want %v", got, want)
	}
}
