package train_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

const batch = 32

// regressionData is y = tanh(x·A) for x ~ N(0, I₄), A fixed: 256 examples.
func regressionData(seed uint64) *datasets.Dataset {
	r := rng.New(seed, "regression")
	a := make([]float64, 4*2)
	for i := range a {
		a[i] = r.Normal()
	}
	d := &datasets.Dataset{Name: "tanh-regression", Features: 4, TargetDim: 2}
	for i := 0; i < 256; i++ {
		x := make([]float64, 4)
		for j := range x {
			x[j] = r.Normal()
			d.X = append(d.X, float32(x[j]))
		}
		for o := 0; o < 2; o++ {
			var s float64
			for j := range x {
				s += x[j] * a[j*2+o]
			}
			d.Targets = append(d.Targets, float32(math.Tanh(s)))
		}
	}
	return d
}

type setup struct {
	model      train.Model
	trainData  *datasets.Loader
	valData    *datasets.Loader
	opt        optim.Optimizer
}

// regression builds a small MLP with dropout on the tanh data.
func regression(t *testing.T, dt tensor.Dtype, d *datasets.Dataset) setup {
	t.Helper()
	g, err := graph.New(dt, 11)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2, Dropout: 0.1, Activation: ops.GELU})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", batch, 4)
	y, _ := g.Input("y", batch, 2)
	out, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := nn.MSELoss(out, y)
	if err != nil {
		t.Fatal(err)
	}
	trainSet, valSet, err := d.Split(0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: batch, Shuffle: true, Seed: 5, DropLast: true, Dtype: dt})
	if err != nil {
		t.Fatal(err)
	}
	vl, err := datasets.NewLoader(valSet, datasets.LoaderConfig{BatchSize: batch, Dtype: dt})
	if err != nil {
		t.Fatal(err)
	}
	return setup{
		model:     train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss, Task: train.Regression},
		trainData: tl, valData: vl,
		opt: &optim.SGD{LearningRate: 0.05, Momentum: 0.9},
	}
}

func run(t *testing.T, s setup, cfg train.Config) (train.Result, error) {
	t.Helper()
	cfg.Quiet = true
	tr, err := train.New(s.model, s.opt, s.trainData, s.valData, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Run()
}

func TestTrainingReducesValidationLoss(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		s := regression(t, dt, regressionData(1))
		res, err := run(t, s, train.Config{Epochs: 30, EvalEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		first, last := res.Evals[0].ValLoss, res.Evals[len(res.Evals)-1].ValLoss
		t.Logf("%v: validation MSE %.4f after 1 step, %.4f after %d steps", dt, first, last, res.Steps)
		if !(last < 0.2*first) {
			t.Errorf("%v: validation MSE went from %v to %v, want a fivefold reduction", dt, first, last)
		}
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = b
	}
	return out
}

func TestSameRunTwiceWritesIdenticalFiles(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, dir := range dirs {
		s := regression(t, tensor.Float32, regressionData(1))
		if _, err := run(t, s, train.Config{Epochs: 2, Dir: dir, CheckpointEvery: 3}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := readAll(t, dirs[0]), readAll(t, dirs[1])
	for _, name := range []string{"steps.csv", "steps.jsonl", "evals.csv", "evals.jsonl", "checkpoint.safetensors", "model.safetensors"} {
		if len(a[name]) == 0 || !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two identical runs (or is empty)", name)
		}
	}
}

// Stopping at step 13 and resuming from the step-10 checkpoint gives the
// files of an uninterrupted run, byte for byte.
func TestResumeReproducesUninterruptedRun(t *testing.T) {
	cfg := train.Config{Epochs: 3, CheckpointEvery: 5}
	full := t.TempDir()
	cfg.Dir = full
	if _, err := run(t, regression(t, tensor.Float64, regressionData(1)), cfg); err != nil {
		t.Fatal(err)
	}
	part := t.TempDir()
	cfg.Dir, cfg.MaxSteps = part, 13
	if _, err := run(t, regression(t, tensor.Float64, regressionData(1)), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.MaxSteps, cfg.Resume = 0, true
	res, err := run(t, regression(t, tensor.Float64, regressionData(1)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 18 {
		t.Errorf("resumed run ended at step %d, want 18", res.Steps)
	}
	a, b := readAll(t, full), readAll(t, part)
	for _, name := range []string{"steps.csv", "steps.jsonl", "evals.csv", "model.safetensors", "checkpoint.safetensors"} {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run:\n%s\nvs\n%s", name, head(a[name]), head(b[name]))
		}
	}
}

func head(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// NaN in a batch stops training at that step, naming it; the checkpoint
// written before is untouched and every weight stays finite.
func TestNaNInDataStopsTraining(t *testing.T) {
	d := regressionData(1)
	s := regression(t, tensor.Float32, d)
	// Corrupt the training data after the loaders were built.
	s.trainData.Dataset().X[7] = float32(math.NaN())
	dir := t.TempDir()
	_, err := run(t, s, train.Config{Epochs: 1, Dir: dir, CheckpointEvery: 1})
	if err == nil || !strings.Contains(err.Error(), "train: step") || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("got %v, want an error naming the step and the NaN", err)
	}
	t.Log(err)
	if _, err := safetensors.Load(filepath.Join(dir, "checkpoint.safetensors")); err != nil && !os.IsNotExist(errors.Unwrap(err)) {
		t.Errorf("checkpoint unreadable after the failure: %v", err)
	}
	assertFinite(t, s.model.Graph)
}

// A learning rate that makes the loss overflow stops training before the
// optimizer writes Inf/NaN into the weights.
func TestDivergenceStopsBeforeTheUpdate(t *testing.T) {
	s := regression(t, tensor.Float32, regressionData(1))
	s.opt = &optim.SGD{LearningRate: 1e30}
	_, err := run(t, s, train.Config{Epochs: 5})
	if !errors.Is(err, graph.ErrNonFinite) {
		t.Fatalf("got %v, want graph.ErrNonFinite", err)
	}
	t.Log(err)
	assertFinite(t, s.model.Graph)
}

func assertFinite(t *testing.T, g *graph.Graph) {
	t.Helper()
	for _, p := range g.ParamTensors() {
		for i, v := range p.Value.Float32s() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s[%d] = %v after the failed step", p.Name, i, v)
			}
		}
	}
}

func TestNewAndResumeRejectBadSetups(t *testing.T) {
	good := regression(t, tensor.Float32, regressionData(1))
	wrongFeatures := regressionData(1)
	wrongFeatures.Features, wrongFeatures.X = 2, wrongFeatures.X[:512]
	wl, err := datasets.NewLoader(wrongFeatures, datasets.LoaderConfig{BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	f64 := regression(t, tensor.Float64, regressionData(1))
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"features", second(train.New(good.model, good.opt, wl, nil, train.Config{})), "expects float32(32, 4)"},
		{"dtype", second(train.New(good.model, good.opt, f64.trainData, nil, train.Config{})), "float64(32, 4)"},
		{"optimizer", second(train.New(good.model, nil, good.trainData, nil, train.Config{})), "no optimizer"},
		{"resume without dir", second(train.New(good.model, good.opt, good.trainData, nil, train.Config{Resume: true})), "need Config.Dir"},
		{"no output", second(train.New(train.Model{Graph: good.model.Graph, Input: good.model.Input, Target: good.model.Target, Loss: good.model.Loss}, good.opt, good.trainData, good.valData, train.Config{})), "needs Model.Output"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, c.err, c.want)
		}
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "checkpoint.safetensors"), []byte("not a checkpoint"), 0o644)
	if _, err := run(t, good, train.Config{Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "resume") {
		t.Errorf("corrupt checkpoint: got %v", err)
	}
	// A checkpoint of a different model (other widths) is refused by name and shape.
	other := t.TempDir()
	g2, _ := graph.New(tensor.Float32, 11)
	nn.NewMLP(g2, "mlp", nn.MLPConfig{In: 4, Hidden: []int{8}, Out: 2})
	safetensors.Save(filepath.Join(other, "checkpoint.safetensors"), g2.ParamTensors(), map[string]string{
		"format": "gelu-train/1", "seed": "11", "step": "1", "epoch": "0", "batch": "1", "loss_sum": "0", "loss_count": "0"})
	fresh := regression(t, tensor.Float32, regressionData(1))
	if _, err := run(t, fresh, train.Config{Dir: other, Resume: true}); err == nil || !strings.Contains(err.Error(), "shape (8, 4), model expects (16, 4)") {
		t.Errorf("mismatched checkpoint: got %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
