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
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// newTrainer builds the float64 regression setup afresh (identical on
// every call) and a trainer with cfg.
func newTrainer(t *testing.T, cfg train.Config) (*train.Trainer, setup) {
	t.Helper()
	s := regression(t, tensor.Float64, regressionData(1))
	if cfg.Progress == nil {
		cfg.Quiet = true
	}
	tr, err := train.New(s.model, s.opt, s.trainData, s.valData, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr, s
}

// Cancelling the context stops the run between steps with an error
// wrapping context.Canceled, after writing a checkpoint at that step and
// the model; resuming from it gives the files of an uninterrupted run.
func TestCancelWritesCheckpointAndModel(t *testing.T) {
	cfg := train.Config{Epochs: 3, CheckpointEvery: 5, EvalEvery: 4}
	checkResumedRun(t, "after a cancel at step 7", cfg, func(t *testing.T, cfg train.Config) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg.OnStep = func(_ *train.Trainer, s train.StepInfo) error {
			if s.Step == 7 {
				cancel()
			}
			return nil
		}
		tr, _ := newTrainer(t, cfg)
		res, err := tr.Run(ctx)
		if !errors.Is(err, context.Canceled) || res.Steps != 7 {
			t.Fatalf("cancelled run: %v after %d steps, want context.Canceled after 7", err, res.Steps)
		}
		t.Log(err)
		f, err := safetensors.Load(filepath.Join(cfg.Dir, "checkpoint.safetensors"))
		if err != nil || f.Metadata["step"] != "7" {
			t.Fatalf("checkpoint after the cancel: %v, at step %q, want 7", err, f.Metadata["step"])
		}
		if _, err := os.Stat(filepath.Join(cfg.Dir, "model.safetensors")); err != nil {
			t.Errorf("no model file after the cancel: %v", err)
		}
	}, "steps.csv", "steps.jsonl", "evals.csv", "evals.jsonl", "model.safetensors", "checkpoint.safetensors")
}

// lrUntil is a schedule: lr for the first n steps, 0 after, so the
// weights, and the validation loss, stop changing at step n.
type lrUntil struct {
	lr float64
	n  int
}

func (s lrUntil) LR(step int) float64 {
	if step < s.n {
		return s.lr
	}
	return 0
}

// firstMin is the step of the first evaluation with the lowest val_loss.
func firstMin(evals []train.EvalInfo) (step int, v float64) {
	step, v = -1, math.Inf(1)
	for _, e := range evals {
		if e.ValLoss < v {
			step, v = e.Step, e.ValLoss
		}
	}
	return step, v
}

// Patience ends the run, as a normal end, once that many evaluations in a
// row have not improved the validation loss: after the weights freeze at
// step 6, the evaluations every 2 steps stop improving, and the run ends
// three of them after its best. The model file is written; best.safetensors
// holds the parameters of the best evaluation.
func TestEarlyStoppingAndBestModel(t *testing.T) {
	dir := t.TempDir()
	tr, s := newTrainer(t, train.Config{Epochs: 5, EvalEvery: 2, Patience: 3, SaveBest: true, Dir: dir, Schedule: lrUntil{0.05, 6}})
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	best, bestLoss := firstMin(res.Evals)
	t.Logf("best val loss %v at step %d; stopped at step %d", bestLoss, best, res.Steps)
	if !res.EarlyStopped || best > 6 || res.Steps != best+3*2 || res.BestStep != best || res.Best != bestLoss {
		t.Errorf("ran %d steps (early stop %v), best %v at %d; evaluations' best %v at %d; want a stop 3 evaluations of 2 steps after it",
			res.Steps, res.EarlyStopped, res.Best, res.BestStep, bestLoss, best)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Errorf("early stop wrote no model: %v", err)
	}
	// The best file, loaded into the model and scored, gives the best loss.
	if err := train.LoadGraphWeights(filepath.Join(dir, "best.safetensors"), s.model.Graph); err != nil {
		t.Fatal(err)
	}
	e, err := tr.Evaluate(s.valData)
	if err != nil || e.Loss != bestLoss {
		t.Errorf("best.safetensors scores %v (%v), want the best evaluation's %v", e.Loss, err, bestLoss)
	}
	f, _ := safetensors.Load(filepath.Join(dir, "best.safetensors"))
	if f.Metadata["step"] != fmt.Sprint(best) {
		t.Errorf("best.safetensors metadata %v, want step %d", f.Metadata, best)
	}
}

// Early stopping resumes exactly: the best value, its step and the
// evaluations since are in the checkpoint.
func TestEarlyStoppingResumes(t *testing.T) {
	cfg := train.Config{Epochs: 5, EvalEvery: 2, Patience: 3, SaveBest: true, CheckpointEvery: 3, Schedule: lrUntil{0.05, 6}}
	checkResumedRun(t, "with early stopping, after step 9", cfg, func(t *testing.T, cfg train.Config) {
		cfg.MaxSteps = 9
		if _, err := runFresh(t, cfg); err != nil {
			t.Fatal(err)
		}
	}, "steps.csv", "evals.csv", "model.safetensors", "best.safetensors")
}

// A directory holding a run is never overwritten by accident: without
// Resume or Overwrite the next run is refused before it writes anything;
// Resume says where it starts, Overwrite starts again.
func TestRunDirectoryIsProtected(t *testing.T) {
	dir := t.TempDir()
	var console bytes.Buffer
	tr, _ := newTrainer(t, train.Config{MaxSteps: 8, CheckpointEvery: 4, Dir: dir, Resume: true, Progress: &console})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "no checkpoint in " + dir + ": starting at step 0\n"; !strings.HasPrefix(console.String(), want) {
		t.Errorf("console %q, want it to start with %q", console.String(), want)
	}
	before := readAll(t, dir)
	tr, _ = newTrainer(t, train.Config{MaxSteps: 4, Dir: dir})
	_, err := tr.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Config.Resume") || !strings.Contains(err.Error(), "Config.Overwrite") {
		t.Errorf("a second run into %s: got %v, want a refusal naming Resume and Overwrite", dir, err)
	}
	for name, b := range readAll(t, dir) {
		if !bytes.Equal(b, before[name]) {
			t.Errorf("the refused run changed %s", name)
		}
	}
	console.Reset()
	tr, _ = newTrainer(t, train.Config{MaxSteps: 12, CheckpointEvery: 4, Dir: dir, Resume: true, Progress: &console})
	if res, err := tr.Run(context.Background()); err != nil || res.Steps != 12 {
		t.Errorf("resume: %v after %d steps", err, res.Steps)
	}
	if want := "resumed from " + dir + " at step 8\n"; !strings.HasPrefix(console.String(), want) {
		t.Errorf("console %q, want it to start with %q", console.String(), want)
	}
	tr, _ = newTrainer(t, train.Config{MaxSteps: 2, CheckpointEvery: 1, Dir: dir, Overwrite: true})
	if res, err := tr.Run(context.Background()); err != nil || res.Steps != 2 {
		t.Errorf("overwrite: %v after %d steps", err, res.Steps)
	}
	if f, err := safetensors.Load(filepath.Join(dir, "checkpoint.safetensors")); err != nil || f.Metadata["step"] != "2" {
		t.Errorf("after Overwrite the checkpoint is at step %q (%v), want 2", f.Metadata["step"], err)
	}
	// An overwriting run that stops before its first checkpoint leaves
	// nothing of the old run to resume or mistake for its own.
	tr, _ = newTrainer(t, train.Config{MaxSteps: 4, CheckpointEvery: 4, Dir: dir, Overwrite: true,
		OnStep: func(*train.Trainer, train.StepInfo) error { return errors.New("stopped") }})
	if _, err := tr.Run(context.Background()); err == nil {
		t.Fatal("the failing hook did not stop the run")
	}
	for _, name := range []string{"checkpoint.safetensors", "model.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s of the overwritten run survived", name)
		}
	}
	// A finished run without a checkpoint (MaxSteps before the first)
	// is protected by its model file.
	other := t.TempDir()
	tr, _ = newTrainer(t, train.Config{MaxSteps: 2, Dir: other})
	tr.Run(context.Background())
	tr, _ = newTrainer(t, train.Config{MaxSteps: 2, Dir: other, Resume: true})
	if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no checkpoint.safetensors to resume from") {
		t.Errorf("resume of a run with a model and no checkpoint: %v", err)
	}
}

// accumulationModel is the regression MLP without dropout (dropout masks
// depend on the batch's shape) for batches of rows.
func accumulationModel(t *testing.T, rows int) (train.Model, []graph.NamedTensor) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, 11)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, 4)
	y, _ := g.Input("y", rows, 2)
	out, _ := mlp.Forward(x)
	loss, _ := nn.MSELoss(out, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss, Task: train.Regression}, g.ParamTensors()
}

// Gradient accumulation over 4 batches of 8 takes the step one batch of
// 32 takes. The loaders share their seed, so batches 4j…4j+3 of the one
// hold the rows of batch j of the other.
//
// The bound: both runs compute the same exact gradient G = (1/32)·Σ_r t_r
// of the 32 rows' terms t_r, in a different order. In float64 each result
// is within γ_m·Σ_r|t_r|/32 of G (γ_m = m·u/(1−m·u), u = 2⁻⁵³), where m
// bounds the rounding steps on any path: the 32-row reduction, the
// 16-wide and 4-wide dot products and the few elementwise operations of
// the forward and backward pass, m = 64 with room to spare. The division
// by 4 and by 32 is exact. So the gradients differ by at most
// 2·γ_m·Σ_r|t_r|/32 per element, Σ_r|t_r| measured from each row alone
// (a model of one row), and one SGD step by lr times that, plus a rounding
// of each parameter (2 ulp). With clipping, the direction g/‖g‖ moves by
// at most 2‖Δg‖/‖g‖ per element (first order), and the norm's own
// rounding adds n·u relative for n parameters.
func TestGradAccumEqualsOneLargerBatch(t *testing.T) {
	d := regressionData(1)
	loader := func(rows int) *datasets.Loader {
		l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: rows, Shuffle: true, Seed: 5, DropLast: true, Dtype: tensor.Float64})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	const lr = 0.1
	// Per-row gradient magnitudes of the first 32 rows, from a model of one row.
	m1, _ := accumulationModel(t, 1)
	mach, err := m1.Graph.Compile(m1.Loss)
	if err != nil {
		t.Fatal(err)
	}
	big, _ := loader(32).Batch(0, 0)
	absSum := map[string][]float64{}
	for r := range 32 {
		x := tensor.New(tensor.WithShape(1, 4), tensor.WithBacking(big.X.Float64s()[4*r:4*r+4]))
		y := tensor.New(tensor.WithShape(1, 2), tensor.WithBacking(big.Y.Float64s()[2*r:2*r+2]))
		_, grads, err := train.Gradients(mach, m1.Input, m1.Target, x, y)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range mach.Params() {
			if absSum[p.Name()] == nil {
				absSum[p.Name()] = make([]float64, grads[i].DataSize())
			}
			for j, v := range grads[i].Float64s() {
				absSum[p.Name()][j] += math.Abs(v) / 32
			}
		}
	}
	const u, m = 0x1p-53, 64
	gamma := m * u / (1 - m*u)
	var tolNorm2 float64
	nParams := 0
	for _, s := range absSum {
		for _, v := range s {
			tolNorm2 += (2 * gamma * v) * (2 * gamma * v)
			nParams++
		}
	}
	for _, clip := range []float64{0, 0.05} {
		step := func(rows, accum int) (train.StepInfo, []graph.NamedTensor) {
			model, params := accumulationModel(t, rows)
			var info train.StepInfo
			tr, err := train.New(model, &optim.SGD{LearningRate: lr}, loader(rows), nil,
				train.Config{MaxSteps: 1, GradAccum: accum, ClipNorm: clip, Quiet: true,
					OnStep: func(_ *train.Trainer, s train.StepInfo) error { info = s; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			return info, params
		}
		sa, pa := step(8, 4)
		sb, pb := step(32, 1)
		norm := sb.GradNorm
		t.Logf("clip %v: loss %v vs %v, grad norm %v vs %v (bound on ‖Δg‖ %.3g)", clip, sa.Loss, sb.Loss, sa.GradNorm, sb.GradNorm, math.Sqrt(tolNorm2))
		if math.Abs(sa.Loss-sb.Loss) > 2*gamma*sb.Loss || math.Abs(sa.GradNorm-sb.GradNorm) > math.Sqrt(tolNorm2)+float64(nParams)*u*norm {
			t.Errorf("clip %v: loss %v and norm %v accumulated, %v and %v in one batch", clip, sa.Loss, sa.GradNorm, sb.Loss, sb.GradNorm)
		}
		worst := 0.0
		for i, p := range pa {
			a, b := p.Value.Float64s(), pb[i].Value.Float64s()
			for j := range a {
				tol := lr*2*gamma*absSum[p.Name][j] + 2*math.Abs(b[j])*2*u
				if clip > 0 && norm > clip {
					tol = lr*clip*(2*math.Sqrt(tolNorm2)/norm+2*float64(nParams)*u) + 2*math.Abs(b[j])*2*u
				}
				worst = max(worst, math.Abs(a[j]-b[j])/tol)
				if math.Abs(a[j]-b[j]) > tol {
					t.Fatalf("clip %v: %s[%d] = %v accumulated, %v in one batch: differ by %.3g, bound %.3g", clip, p.Name, j, a[j], b[j], math.Abs(a[j]-b[j]), tol)
				}
			}
		}
		t.Logf("clip %v: largest difference %.3g of its bound", clip, worst)
	}
}

// A value not measured is an empty CSV cell, a JSON null and "–" on the
// console: the train loss of the evaluation at step 0, the accuracy of a
// regression.
func TestUnmeasuredValuesAreEmpty(t *testing.T) {
	dir := t.TempDir()
	var console bytes.Buffer
	tr, _ := newTrainer(t, train.Config{MaxSteps: 2, EvalAtStart: true, Dir: dir, Progress: &console})
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Evals[0]; e.TrainSteps != 0 || !math.IsNaN(e.TrainLoss) || res.Evals[1].TrainSteps != 2 {
		t.Errorf("evaluations %+v, want no train loss at step 0 and one of 2 steps at step 2", res.Evals)
	}
	files := readAll(t, dir)
	csvRows := strings.Split(string(files["evals.csv"]), "\n")
	jsonRows := strings.Split(string(files["evals.jsonl"]), "\n")
	if !strings.HasPrefix(csvRows[1], "0,0,,") || !strings.HasSuffix(csvRows[1], ",") || !strings.HasSuffix(csvRows[2], ",") {
		t.Errorf("evals.csv:\n%s\nwant empty train_loss at step 0 and empty val_accuracy (regression)", files["evals.csv"])
	}
	if !strings.Contains(jsonRows[0], `"train_loss":null`) || !strings.Contains(jsonRows[1], `"val_accuracy":null`) {
		t.Errorf("evals.jsonl:\n%s\nwant null for the values not measured", files["evals.jsonl"])
	}
	if !strings.Contains(console.String(), "step 0 epoch 0: train loss –, val loss") || strings.Contains(console.String(), "NaN") {
		t.Errorf("console:\n%s\nwant the missing train loss shown as –", console.String())
	}
}

// Forgetting Task: train.Regression fails in New, naming the fix.
func TestForgottenRegressionFailsInNew(t *testing.T) {
	s := regression(t, tensor.Float32, regressionData(1))
	s.model.Task = train.Classification
	_, err := train.New(s.model, s.opt, s.trainData, s.valData, train.Config{})
	if err == nil || !strings.Contains(err.Error(), "Model.Task = train.Regression") {
		t.Errorf("got %v, want an error in New naming Model.Task = train.Regression", err)
	}
	t.Log(err)
}

// Resume checks the optimizer state before it changes anything: a
// checkpoint whose optimizer tensor has the wrong shape is refused and
// the model keeps its parameters.
func TestResumeWithBadOptimizerStateLeavesModelUntouched(t *testing.T) {
	base := t.TempDir()
	if _, err := runFresh(t, train.Config{MaxSteps: 4, CheckpointEvery: 4, Dir: base}); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Load(filepath.Join(base, "checkpoint.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []graph.NamedTensor
	const victim = "optimizer.mlp.layers.1.weight.momentum_buffer"
	for _, nt := range f.Tensors {
		if nt.Name == victim {
			nt.Value = tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))
		}
		bad = append(bad, nt)
	}
	if _, ok := f.Get(victim); !ok {
		t.Fatalf("the checkpoint has no %s", victim)
	}
	dir := t.TempDir()
	if err := safetensors.Save(filepath.Join(dir, "checkpoint.safetensors"), bad, f.Metadata); err != nil {
		t.Fatal(err)
	}
	tr, s := newTrainer(t, train.Config{MaxSteps: 8, Dir: dir, Resume: true})
	before := map[string][]float64{}
	for _, p := range s.model.Graph.ParamTensors() {
		before[p.Name] = append([]float64(nil), p.Value.Float64s()...)
	}
	_, err = tr.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "momentum_buffer") {
		t.Fatalf("got %v, want a refusal naming the optimizer state", err)
	}
	t.Log(err)
	for _, p := range s.model.Graph.ParamTensors() {
		for i, v := range p.Value.Float64s() {
			if v != before[p.Name][i] {
				t.Fatalf("%s[%d] changed from %v to %v by a refused resume", p.Name, i, before[p.Name][i], v)
			}
		}
	}
}

// Model.Args go into the checkpoint, best.safetensors and
// model.safetensors as model_args; resuming with other args is refused,
// naming each difference, unless AllowArgsMismatch.
func TestModelArgs(t *testing.T) {
	dir := t.TempDir()
	with := func(args map[string]string, cfg train.Config) (train.Result, error) {
		s := regression(t, tensor.Float64, regressionData(1))
		s.model.Args = args
		cfg.Quiet, cfg.Dir = true, dir
		tr, err := train.New(s.model, s.opt, s.trainData, s.valData, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Run(context.Background())
	}
	args := map[string]string{"n_embd": "16", "activation": "gelu"}
	if _, err := with(args, train.Config{MaxSteps: 4, CheckpointEvery: 2, SaveBest: true, EvalEvery: 2}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"checkpoint.safetensors", "model.safetensors", "best.safetensors"} {
		f, err := safetensors.Load(filepath.Join(dir, name))
		if err != nil || f.Metadata["model_args"] != `{"activation":"gelu","n_embd":"16"}` {
			t.Errorf("%s: model_args %q (%v)", name, f.Metadata["model_args"], err)
		}
	}
	_, err := with(map[string]string{"n_embd": "32", "bias": "false"}, train.Config{MaxSteps: 6, Resume: true, SaveBest: true})
	for _, want := range []string{`activation: checkpoint "gelu", model (none)`, `bias: checkpoint (none), model "false"`, `n_embd: checkpoint "16", model "32"`, "AllowArgsMismatch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume with other args: got %v, want %q", err, want)
		}
	}
	if _, err := with(map[string]string{"n_embd": "32"}, train.Config{MaxSteps: 6, Resume: true, SaveBest: true, AllowArgsMismatch: true}); err != nil {
		t.Errorf("AllowArgsMismatch: %v", err)
	}
}

// pairs is Data with two inputs and ids as targets: "a" and "b" (rows × 2
// features each) and class labels "y" = (a₀ + b₀ > 0) — a model with more
// inputs than x, and ids converted at the boundary. Batch i holds rows
// [i·rows, (i+1)·rows) of n, the last batch padded.
type pairs struct {
	a, b []float64
	y    []int
	rows int
}

func newPairs(n, rows int, seed uint64) *pairs {
	p := &pairs{rows: rows}
	r := regressionData(seed)
	for i := range n {
		a0, a1, b0, b1 := float64(r.X[4*i]), float64(r.X[4*i+1]), float64(r.X[4*i+2]), float64(r.X[4*i+3])
		p.a, p.b = append(p.a, a0, a1), append(p.b, b0, b1)
		label := 0
		if a0+b0 > 0 {
			label = 1
		}
		p.y = append(p.y, label)
	}
	return p
}

func (p *pairs) NumBatches() int { return (len(p.y) + p.rows - 1) / p.rows }

func (p *pairs) Batch(epoch, i int) (datasets.Batch, error) {
	start := i * p.rows
	size := min(p.rows, len(p.y)-start)
	a := tensor.New(tensor.WithShape(p.rows, 2), tensor.Of(tensor.Float64))
	b := tensor.New(tensor.WithShape(p.rows, 2), tensor.Of(tensor.Float64))
	y := make([]int, p.rows)
	for r := range p.rows {
		k := start + r%size
		copy(a.Float64s()[2*r:2*r+2], p.a[2*k:2*k+2])
		copy(b.Float64s()[2*r:2*r+2], p.b[2*k:2*k+2])
		y[r] = p.y[k]
	}
	return datasets.Batch{Size: size, Fields: []datasets.Field{
		{Name: "a", Shape: []int{p.rows, 2}, Values: a}, {Name: "b", Shape: []int{p.rows, 2}, Values: b},
		{Name: "y", Shape: []int{p.rows}, IDs: y}}}, nil
}

// A model of two named inputs trains on Data that is not a Loader, and
// evaluates at any batch size: a batch of 7 or of 100 rows scores each
// row as the model's own batch of 16 does.
func TestNamedInputsAndAnyEvaluationBatch(t *testing.T) {
	const rows = 16
	g, _ := graph.New(tensor.Float64, 3)
	a, _ := g.Input("a", rows, 2)
	b, _ := g.Input("b", rows, 2)
	y, _ := g.Input("labels", rows)
	la, _ := nn.NewLinear(g, "la", 2, 8)
	lb, _ := nn.NewLinear(g, "lb", 2, 8)
	head, _ := nn.NewLinear(g, "head", 8, 2)
	ha, _ := la.Forward(a)
	hb, _ := lb.Forward(b)
	h, _ := G.Add(ha, hb)
	h, _ = G.Tanh(h)
	logits, _ := head.Forward(h)
	loss, _ := nn.CrossEntropyLoss(logits, y)
	model := train.Model{Graph: g, Target: y, Inputs: map[string]*G.Node{"a": a, "b": b}, Output: logits, Loss: loss}
	tr, err := train.New(model, &optim.SGD{LearningRate: 0.5, Momentum: 0.9}, newPairs(192, rows, 1), newPairs(64, rows, 2), train.Config{Epochs: 20, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, last := res.Evals[0], res.Evals[len(res.Evals)-1]
	t.Logf("val accuracy %v after one epoch, %v after %d steps", first.ValAccuracy, last.ValAccuracy, res.Steps)
	if !(last.ValAccuracy > 0.9) {
		t.Errorf("validation accuracy %v, want > 0.9 on a linearly separable task", last.ValAccuracy)
	}
	ref, err := tr.Evaluate(newPairs(64, rows, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{7, 100} {
		e, err := tr.Evaluate(newPairs(64, n, 2))
		if err != nil {
			t.Fatal(err)
		}
		if e.Targets != 64 || len(e.Rows) != 64 || e.Accuracy != ref.Accuracy {
			t.Fatalf("batches of %d: %d targets, %d rows, accuracy %v; want 64, 64, %v", n, e.Targets, len(e.Rows), e.Accuracy, ref.Accuracy)
		}
		for i := range e.Rows {
			if math.Abs(e.Rows[i]-ref.Rows[i]) > 1e-14*max(1, ref.Rows[i]) {
				t.Errorf("batches of %d: row %d scores %v, batches of %d %v", n, i, e.Rows[i], rows, ref.Rows[i])
			}
		}
	}
	// An id that float32 cannot hold exactly is refused where it enters.
	g32, _ := graph.New(tensor.Float32, 1)
	x32, _ := g32.Input("x", 1, 2)
	y32, _ := g32.Input("y", 1)
	lin, _ := nn.NewLinear(g32, "lin", 2, 3)
	out32, _ := lin.Forward(x32)
	loss32, _ := nn.CrossEntropyLoss(out32, y32)
	big := &datasets.Dataset{Name: "big ids", Features: 2, X: []float32{1, 2}, Labels: []int{1 << 24}, Classes: 1<<24 + 1}
	l, err := datasets.NewLoader(big, datasets.LoaderConfig{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr32, err := train.New(train.Model{Graph: g32, Input: x32, Target: y32, Loss: loss32}, &optim.SGD{}, l, nil, train.Config{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr32.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "not exactly representable in float32") {
		t.Errorf("id 2^24 into float32: got %v", err)
	}
}

// Evaluation skips target −1 (nanoGPT's ignore_index): the loss is the
// mean over the other targets, the row losses their means per row;
// checked against log-softmax computed here from the model's logits.
func TestIgnoredTargetsAreNotScored(t *testing.T) {
	const rows, T, vocab = 4, 3, 5
	g, _ := graph.New(tensor.Float64, 2)
	gpt, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: T, VocabSize: vocab, Layers: 1, Heads: 1, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, T)
	y, _ := g.Input("y", rows, T)
	logits, loss, err := gpt.Loss(x, y)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}
	s, _ := datasets.NewTokenStream(ids, datasets.TokenStreamConfig{BatchSize: rows, BlockSize: T, Seed: 1})
	tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, &optim.SGD{}, s, nil, train.Config{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	xs := []int{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1}
	ys := []int{1, -1, 3, -1, -1, -1, 2, 3, 4, 0, 1, -1}
	data := fixed{{Size: rows, Fields: []datasets.Field{{Name: "x", Shape: []int{rows, T}, IDs: xs}, {Name: "y", Shape: []int{rows, T}, IDs: ys}}}}
	e, err := tr.Evaluate(data)
	if err != nil {
		t.Fatal(err)
	}
	// The logits by hand: the evaluation machine on the same ids.
	in := tensor.New(tensor.WithShape(rows, T), tensor.Of(tensor.Float64))
	for i, v := range xs {
		in.Float64s()[i] = float64(v)
	}
	g.SetTraining(false)
	tr.EvalMachine.Set(x, in)
	tr.EvalMachine.Set(y, tensor.New(tensor.WithShape(rows, T), tensor.Of(tensor.Float64)))
	if err := tr.EvalMachine.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := tr.EvalMachine.Value(logits)
	out := v.(*tensor.Dense).Float64s()
	var sum float64
	var n int
	rowLoss := make([]float64, rows)
	for r := range rows {
		var rs float64
		var rn int
		for p := range T {
			k := r*T + p
			if ys[k] == -1 {
				continue
			}
			var z float64
			for c := range vocab {
				z += math.Exp(out[k*vocab+c])
			}
			l := math.Log(z) - out[k*vocab+ys[k]]
			rs, rn, sum, n = rs+l, rn+1, sum+l, n+1
		}
		rowLoss[r] = rs / float64(rn)
		if rn == 0 {
			rowLoss[r] = math.NaN()
		}
	}
	if e.Targets != 7 || math.Abs(e.Loss-sum/7) > 1e-12 {
		t.Errorf("loss %v over %d targets, by hand %v over %d", e.Loss, e.Targets, sum/float64(n), n)
	}
	for r := range rows {
		if !(math.Abs(e.Rows[r]-rowLoss[r]) <= 1e-12) && !(math.IsNaN(e.Rows[r]) && math.IsNaN(rowLoss[r])) {
			t.Errorf("row %d: %v, by hand %v", r, e.Rows[r], rowLoss[r])
		}
	}
}

// fixed is Data of the given batches.
type fixed []datasets.Batch

func (f fixed) NumBatches() int                            { return len(f) }
func (f fixed) Batch(epoch, i int) (datasets.Batch, error) { return f[i], nil }

// One gradient norm: the grad_norm logged without clipping is the norm
// clipping measures, bit for bit (a clip far above it changes nothing).
func TestOneGradientNorm(t *testing.T) {
	norms := func(clip float64) []float64 {
		var out []float64
		tr, _ := newTrainer(t, train.Config{MaxSteps: 6, ClipNorm: clip, OnStep: func(_ *train.Trainer, s train.StepInfo) error {
			out = append(out, s.GradNorm)
			return nil
		}})
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := norms(0), norms(1e300)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("step %d: grad_norm %v without clipping, %v with a clip that never acts", i+1, a[i], b[i])
		}
	}
}

// A model of sequences of ids shows its throughput in tokens/s.
func TestLanguageModelCountsTokens(t *testing.T) {
	const rows, T = 4, 8
	g, _ := graph.New(tensor.Float32, 2)
	gpt, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: T, VocabSize: 10, Layers: 1, Heads: 1, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, T)
	y, _ := g.Input("y", rows, T)
	logits, loss, _ := gpt.Loss(x, y)
	ids := make([]int, 200)
	for i := range ids {
		ids[i] = i * i % 10
	}
	s, _ := datasets.NewTokenStream(ids, datasets.TokenStreamConfig{BatchSize: rows, BlockSize: T, Seed: 1})
	var console bytes.Buffer
	tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, optim.NewAdamW(1e-2), s, s,
		train.Config{MaxSteps: 4, Progress: &console})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(console.String(), " tokens/s)") {
		t.Errorf("console %q, want tokens/s", console.String())
	}
}

// A checkpoint resumes at its own precision: float32 tensors are refused
// by a float64 model (a conversion would not continue the same run).
func TestResumeRejectsOtherPrecision(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, regression(t, tensor.Float32, regressionData(1)), train.Config{MaxSteps: 3, CheckpointEvery: 3, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	_, err := runFresh(t, train.Config{MaxSteps: 6, Dir: dir, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "is float32, the model's is float64") {
		t.Errorf("float32 checkpoint into a float64 model: got %v", err)
	}
}

// A run with gradient accumulation resumes exactly, and a checkpoint
// resumes only with the GradAccum it was written with.
func TestGradAccumResumes(t *testing.T) {
	cfg := train.Config{Epochs: 3, GradAccum: 2, CheckpointEvery: 2, EvalEvery: 2}
	checkResumedRun(t, "with accumulation, after step 5", cfg, func(t *testing.T, cfg train.Config) {
		cfg.MaxSteps = 5
		if _, err := runFresh(t, cfg); err != nil {
			t.Fatal(err)
		}
	}, "steps.csv", "evals.csv", "model.safetensors", "checkpoint.safetensors")
	dir := t.TempDir()
	if _, err := runFresh(t, train.Config{MaxSteps: 2, GradAccum: 2, CheckpointEvery: 2, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := runFresh(t, train.Config{MaxSteps: 4, Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "GradAccum 2, this run has 1") {
		t.Errorf("resume with another GradAccum: %v", err)
	}
}

// A nil *datasets.Loader as validation data means no evaluation, as an
// untyped nil does.
func TestNilLoaderIsNoData(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	var none *datasets.Loader
	tr, err := train.New(s.model, s.opt, s.trainData, none, train.Config{MaxSteps: 2, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tr.Run(context.Background()); err != nil || !math.IsNaN(res.Evals[0].ValLoss) {
		t.Errorf("run without validation data: %v, %+v", err, res.Evals)
	}
}
