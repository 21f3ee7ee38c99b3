package train_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	G "gorgonia.org/gorgonia"
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
	model     train.Model
	trainData *datasets.Loader
	valData   *datasets.Loader
	opt       optim.Optimizer
}

// regression builds a small MLP with dropout on the tanh data.
func regression(t *testing.T, dt tensor.Dtype, d *datasets.Dataset) setup {
	t.Helper()
	g, err := graph.New(dt, 11)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2, Dropout: 0.1, Activation: activation.GELU})
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
	return tr.Run(context.Background())
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
	res := checkResumedRun(t, "after step 13", cfg, func(t *testing.T, cfg train.Config) {
		cfg.MaxSteps = 13
		if _, err := runFresh(t, cfg); err != nil {
			t.Fatal(err)
		}
	}, "steps.csv", "steps.jsonl", "evals.csv", "model.safetensors", "checkpoint.safetensors")
	if res.Steps != 18 {
		t.Errorf("resumed run ended at step %d, want 18", res.Steps)
	}
}

// checkResumedRun runs cfg uninterrupted in one directory; in another,
// interrupt runs cfg (its Dir set there) stopped early, failing or
// damaging its files as a kill would, and cfg then resumes there. Each
// named file must equal the uninterrupted run's. It returns the resumed
// run's result.
func checkResumedRun(t *testing.T, what string, cfg train.Config, interrupt func(t *testing.T, cfg train.Config), names ...string) train.Result {
	t.Helper()
	full := t.TempDir()
	cfg.Dir = full
	if _, err := runFresh(t, cfg); err != nil {
		t.Fatal(err)
	}
	part := t.TempDir()
	cfg.Dir = part
	interrupt(t, cfg)
	cfg.Resume = true
	res, err := runFresh(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameFiles(t, what, full, part, names...)
	return res
}

// runFresh runs the float64 regression setup, built anew (so identical)
// on every call, with cfg.
func runFresh(t *testing.T, cfg train.Config) (train.Result, error) {
	t.Helper()
	return run(t, regression(t, tensor.Float64, regressionData(1)), cfg)
}

// checkSameFiles reports each named file of the resumed run's directory
// that differs from the uninterrupted run's.
func checkSameFiles(t *testing.T, what, full, resumed string, names ...string) {
	t.Helper()
	a, b := readAll(t, full), readAll(t, resumed)
	for _, name := range names {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s of the run resumed %s differs from the uninterrupted run:\n%s\nvs\n%s", name, what, head(b[name]), head(a[name]))
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
	res, err := run(t, s, train.Config{Epochs: 5})
	if !errors.Is(err, graph.ErrNonFinite) {
		t.Fatalf("got %v, want graph.ErrNonFinite", err)
	}
	if res.Steps != 1 {
		t.Errorf("Result.Steps = %d after failing at step 2, want 1", res.Steps)
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
		"format": "gelu-train/1", "seed": "11", "step": "1", "epoch": "0", "batch": "1", "loss_sum": "0", "loss_count": "0", "lr": "0.05"})
	fresh := regression(t, tensor.Float32, regressionData(1))
	if _, err := run(t, fresh, train.Config{Dir: other, Resume: true}); err == nil || !strings.Contains(err.Error(), "shape (8, 4), model expects (16, 4)") {
		t.Errorf("mismatched checkpoint: got %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// EvalAtStart evaluates step 0; Epochs 0 with MaxSteps runs as many epochs
// as needed; the last step is evaluated; no step is evaluated twice even
// when an epoch ends on a multiple of EvalEvery.
func TestEvaluationSchedule(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1)) // 6 batches per epoch
	if n := s.trainData.NumBatches(); n != 6 {
		t.Fatalf("%d batches per epoch, the test assumes 6", n)
	}
	res, err := run(t, s, train.Config{MaxSteps: 14, EvalEvery: 3, EvalAtStart: true})
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, e := range res.Evals {
		steps = append(steps, e.Step)
	}
	want := []int{0, 3, 6, 9, 12, 14}
	if res.Steps != 14 || fmt.Sprint(steps) != fmt.Sprint(want) {
		t.Errorf("ran %d steps, evaluated at %v; want 14 steps, evaluations at %v", res.Steps, steps, want)
	}
	if !math.IsNaN(res.Evals[0].TrainLoss) || math.IsNaN(res.Evals[1].TrainLoss) {
		t.Errorf("train loss at step 0 should be NaN (no steps yet) and defined later: %+v", res.Evals[:2])
	}
}

// Evaluate returns every example's loss; their mean is the reported loss
// and matches an independent computation from the model's outputs.
func TestEvaluateRows(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	tr, err := train.New(s.model, s.opt, s.trainData, s.valData, train.Config{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tr.Evaluate(s.valData)
	if err != nil {
		t.Fatal(err)
	}
	n := s.valData.Dataset().Len()
	if len(e.Rows) != n {
		t.Fatalf("%d row losses for %d validation examples", len(e.Rows), n)
	}
	var sum float64
	for _, l := range e.Rows {
		sum += l
	}
	if math.Abs(sum/float64(n)-e.Loss) > 1e-12 {
		t.Errorf("mean of rows %v, Loss %v", sum/float64(n), e.Loss)
	}
	// The first validation example by hand: MLP output from the graph's
	// evaluation machine on a batch holding it, squared error per output.
	b, _ := s.valData.Batch(0, 0)
	tr.EvalMachine.Set(s.model.Input, b.X)
	s.model.Graph.SetTraining(false)
	if err := tr.EvalMachine.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := tr.EvalMachine.Value(s.model.Output)
	out, y := v.(*tensor.Dense).Float64s(), b.Y.Float64s()
	want := ((out[0]-y[0])*(out[0]-y[0]) + (out[1]-y[1])*(out[1]-y[1])) / 2
	if math.Abs(e.Rows[0]-want) > 1e-12 {
		t.Errorf("row 0 loss %v, by hand %v", e.Rows[0], want)
	}
}

// Config.Keep makes intermediate nodes readable from the training machine
// in OnStep.
func TestKeepForHooks(t *testing.T) {
	d := regressionData(1)
	g, _ := graph.New(tensor.Float64, 11)
	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2})
	x, _ := g.Input("x", batch, 4)
	y, _ := g.Input("y", batch, 2)
	out, _ := mlp.Forward(x)
	loss, _ := nn.MSELoss(out, y)
	tl, _ := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: batch, DropLast: true, Dtype: tensor.Float64})
	pre := mlp.Pre[0]
	var seen int
	tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss, Task: train.Regression},
		&optim.SGD{LearningRate: 0.01}, tl, nil, train.Config{MaxSteps: 3, Quiet: true, Keep: []*G.Node{pre},
			OnStep: func(tr *train.Trainer, s train.StepInfo) error {
				v, err := tr.Machine.Value(pre)
				if err != nil {
					return err
				}
				if got := v.(*tensor.Dense).Shape(); !graph.SameShape(got, tensor.Shape{batch, 16}) {
					return fmt.Errorf("pre-activation shape %v", got)
				}
				seen++
				return nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil || seen != 3 {
		t.Errorf("run: %v; hook read the kept node %d times, want 3", err, seen)
	}
}
