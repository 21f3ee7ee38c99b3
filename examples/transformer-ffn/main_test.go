package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/extest"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
	"gorgonia.org/tensor"
)

// tinyText writes the first n characters of the Opticks to a file.
func tinyText(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(p, []byte(string([]rune(datasets.Opticks())[:n])), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func tiny(t *testing.T, text string) config {
	return config{Flags: experiment.Flags{Out: t.TempDir(), Seed: 1, Seeds: 1, Workers: 1}, TextFile: text, Acts: []activation.Activation{activation.ReLU, activation.GELU},
		Context: 4, Embed: 8, Dim: 16, Hidden: 32, Layers: 2, Batch: 64, Steps: 40, EvalEvery: 10, Warmup: 5,
		ValWindows: 512, DPI: 30, LR: 0.1, Momentum: 0.9, Clip: 1, ValFraction: 0.2, ChunkLen: 1000, Quiet: true,
		Args: []string{"transformer-ffn", "-steps", "40"}}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func TestRunLearnsAndWritesTheReport(t *testing.T) {
	c := tiny(t, tinyText(t, 20000))
	res, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(res.Runs))
	}
	for _, r := range res.Runs {
		name, steps, val, trainLoss := r.Setting.Name(), r.Vectors["step_loss"], r.Curve.Metric("val_loss"), r.Curve.Metric("train_loss")
		if len(steps) != c.Steps || len(val) != 1+c.Steps/c.EvalEvery || r.Curve.Steps[0] != 0 || r.Curve.Steps[len(val)-1] != c.Steps {
			t.Fatalf("%s: %d steps and evaluations at %v", name, len(steps), r.Curve.Steps)
		}
		for i, step := range r.Curve.Steps {
			if !finite(val[i]) || (step > 0 && !finite(trainLoss[i])) {
				t.Errorf("%s: non-finite loss at step %d: val %v, train %v", name, step, val[i], trainLoss[i])
			}
		}
		// Learning: the loss falls well below the initial one, and below
		// the entropy of a uniform guess over the vocabulary.
		first, last := val[0], val[len(val)-1]
		if !(last < first-0.5) || !(last < math.Log(float64(res.Shape.Vocab))) {
			t.Errorf("%s: validation loss %.4f → %.4f, want a drop of more than 0.5 nats to below ln(vocab) = %.4f", name, first, last, math.Log(float64(res.Shape.Vocab)))
		}
		if trainLoss[len(val)-1] >= trainLoss[1] || steps[len(steps)-1] >= steps[0] {
			t.Errorf("%s: training loss did not fall: intervals %.4f → %.4f, steps %.4f → %.4f", name, trainLoss[1], trainLoss[len(val)-1], steps[0], steps[len(steps)-1])
		}
		if rows := r.Vectors["val_rows"]; len(rows) != res.Data.Eval.Len() || math.Abs(mean(rows)-last) > 1e-12 {
			t.Errorf("%s: %d per-window losses with mean %v, final loss %v", name, len(rows), mean(rows), last)
		}
		checkAgainstTrainer(t, filepath.Join(r.Dir, "evals.csv"), r)
	}
	// Every activation starts from the same weights, and the parameter
	// count in the report is the graph's.
	g1, _ := CharFFNModel(res.Shape, activation.ReLU, 8, c.Seed)
	g2, _ := CharFFNModel(res.Shape, activation.GELU, 8, c.Seed)
	p1, p2 := g1.Graph.ParamTensors(), g2.Graph.ParamTensors()
	n := 0
	for i := range p1 {
		if p1[i].Name != p2[i].Name || !slices.Equal(p1[i].Value.Float32s(), p2[i].Value.Float32s()) {
			t.Errorf("parameter %s differs between the activations' initial models", p1[i].Name)
		}
		n += p1[i].Value.Shape().TotalSize()
	}
	if n != res.Shape.Params() {
		t.Errorf("the graph has %d parameters, CharFFN.Params() says %d", n, res.Shape.Params())
	}

	sum := extest.CheckOutput(t, c.Out, "transformer-ffn -steps 40", "curves.csv", "setup.csv", "results.csv", "comparison.csv", "loss.png",
		"loss_val_late.png", "timing.csv", "relu/seed1/steps.csv", "relu/seed1/evals.csv", "relu/seed1/model.safetensors", "gelu/seed1/steps.csv", "gelu/seed1/model.safetensors")
	if md, _ := os.ReadFile(filepath.Join(c.Out, "report.md")); !strings.Contains(string(md), "![Loss vs step](loss.png)") {
		t.Errorf("report.md lacks the plot:\n%.300s", md)
	}
	checkSummary(t, sum, res)
}

// checkAgainstTrainer compares the curve this program recorded with the
// trainer's evals.csv at every evaluation, step 0 included.
func checkAgainstTrainer(t *testing.T, evalsCSV string, r *runResult) {
	t.Helper()
	raw, err := os.ReadFile(evalsCSV)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 1+len(r.Curve.Steps) { // header + one row per evaluation
		t.Fatalf("%s has %d lines, want %d", evalsCSV, len(lines), 1+len(r.Curve.Steps))
	}
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		step, _ := strconv.Atoi(f[0])
		val, _ := strconv.ParseFloat(f[3], 64)
		acc, _ := strconv.ParseFloat(f[4], 64)
		if step != r.Curve.Steps[i] || math.Abs(val-r.Curve.Metric("val_loss")[i]) > 1e-9 || acc != r.Curve.Metric("val_accuracy")[i] {
			t.Errorf("%s row %d: trainer says step %d loss %v accuracy %v, this program step %d %v %v", evalsCSV, i+1, step, val, acc,
				r.Curve.Steps[i], r.Curve.Metric("val_loss")[i], r.Curve.Metric("val_accuracy")[i])
		}
	}
}

func checkSummary(t *testing.T, sum *report.Summary, res *results) {
	t.Helper()
	num := func(k string) float64 {
		v, ok := sum.Number(k)
		if !ok {
			t.Errorf("summary.json: %s = %v, want a number", k, sum.Values[k])
		}
		return v
	}
	relu, gelu := res.Runs[0].Curve, res.Runs[1].Curve
	for k, want := range map[string]float64{
		"gelu.final_val_loss": gelu.Last("val_loss"), "relu.final_val_bpc": relu.Last("val_loss") / math.Log(2),
		"gelu.initial_val_loss": gelu.Metric("val_loss")[0], "gelu.final_train_loss": gelu.Last("train_loss"),
		"gelu.delta_val_loss": gelu.Last("val_loss") - relu.Last("val_loss"), "data.vocab": float64(res.Shape.Vocab),
		"data.eval_windows": float64(len(res.Runs[1].Vectors["val_rows"])),
	} {
		if got := num(k); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.15g, want %.15g", k, got, want)
		}
	}
	if v := num("gelu.delta_val_loss_se"); !(v > 0) {
		t.Errorf("gelu.delta_val_loss_se = %v, want > 0", v)
	}
}

// keys.txt states the smoothing of the training loss as a number; it must
// be the one the program uses.
func TestKeysStateTheSmoothing(t *testing.T) {
	want := fmt.Sprintf("*.train_loss_max_rise largest rise (nats) of the training loss, averaged over %d steps,", smooth)
	if !strings.Contains(keysText, want) {
		t.Errorf("keys.txt lacks %q", want)
	}
}

// Training twice with the same configuration, once run by run and once
// two runs at a time, writes the same files byte for byte but timing.csv,
// the wall times; a second seed sets the sign-test keys.
func TestRunIsDeterministic(t *testing.T) {
	text := tinyText(t, 12000)
	c1, c2 := tiny(t, text), tiny(t, text)
	c1.Steps, c2.Steps, c1.Seeds, c2.Seeds, c2.Workers = 12, 12, 2, 2, 2
	for _, c := range []config{c1, c2} {
		if _, err := run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	sum := extest.CheckOutput(t, c1.Out, "transformer-ffn -steps 40")
	if n, p := sum.Values["gelu.lower_seeds"].(float64), sum.Values["gelu.p_value"]; p != map[float64]any{0: 1.0, 1: 0.75, 2: 0.25}[n] {
		t.Errorf("gelu lower in %v of 2 seeds, p = %v", n, p)
	}
	if n := extest.SameFiles(t, c1.Out, c2.Out, "timing.csv"); n < 8+7*4 {
		t.Errorf("compared %d files, want the report's 8 and 7 per run", n)
	}
}

// At learning rate 1e21 every run diverges, and the experiment still
// finishes: the report names each run and the step. Step 1 runs at lr
// 1e21/5 (warmup) with the gradient norm clipped to 1, so the weights
// jump to order 1e20; step 2's forward pass multiplies two such (the
// embedding by the projection), past float32's 3.4e38: every run
// diverges at step 2. The same command twice writes the same files.
func TestDivergedRunsAreReported(t *testing.T) {
	text := tinyText(t, 12000)
	res, dir := extest.RunTwice(t, func(dir string, first bool) (*results, error) {
		c := tiny(t, text)
		c.Out, c.Steps, c.Seeds, c.LR = dir, 12, 2, 1e21
		if !first {
			c.Workers = 2
		}
		return run(context.Background(), c)
	}, "timing.csv")
	for _, r := range res.Runs {
		if r.DivergedStep() != 2 || !slices.Equal(r.Curve.Steps, []int{0}) || r.Vectors["val_rows"] != nil {
			t.Errorf("%s seed %d: diverged at step %d (%q), evaluations at %v, %d final rows; want step 2, [0], none",
				r.Name, r.Seed, r.DivergedStep(), r.Diverged, r.Curve.Steps, len(r.Vectors["val_rows"]))
		}
	}
	sum := extest.CheckOutput(t, dir, "transformer-ffn -steps 40", "results.csv", "loss.png")
	for _, k := range []string{"relu.final_val_loss", "gelu.delta_val_loss"} {
		if v := sum.Values[k]; v != "NaN" {
			t.Errorf("%s = %v, want NaN: no run finished", k, v)
		}
	}
	if n, _ := sum.Number("gelu.diverged"); n != 2 {
		t.Errorf("gelu.diverged = %v, want 2", n)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| relu | 1 | ", " | diverged at step 2 | diverged at step 2 | ", "4 of 4 runs diverged",
		"- gelu, seed 2: diverged at step 2: train: step 2 ", "- gelu − relu: not compared: in no seed did both runs finish.",
		"No plot of the validation loss from step 6 on: every run diverged before it."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// -init with this program's own model.safetensors starts exactly where the
// run that wrote it ended; a file of other shapes is refused clearly.
func TestInitRoundTrip(t *testing.T) {
	text := tinyText(t, 12000)
	a := tiny(t, text)
	a.Steps, a.Acts = 20, []activation.Activation{activation.GELU}
	ra, err := run(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	b := tiny(t, text)
	b.Steps, b.Acts, b.Init = 10, []activation.Activation{activation.GELU}, filepath.Join(a.Out, "gelu", "seed1", "model.safetensors")
	rb, err := run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	// val_rows: each window's loss under the final model; the trainer's
	// evaluation sums them in the same order.
	if got, want := rb.Runs[0].Curve.Metric("val_loss")[0], mean(ra.Runs[0].Vectors["val_rows"]); got != want {
		t.Errorf("initial loss from -init %v, want the loss the writing run ended with, %v", got, want)
	}
	if fresh := ra.Runs[0].Curve.Metric("val_loss")[0]; rb.Runs[0].Curve.Metric("val_loss")[0] == fresh {
		t.Error("-init had no effect: the initial loss equals a fresh model's")
	}

	wrong := tiny(t, text)
	wrong.Dim, wrong.Init = 24, b.Init
	_, err = run(context.Background(), wrong)
	if err == nil || !strings.Contains(err.Error(), "-init") || !strings.Contains(err.Error(), "proj.weight") || !strings.Contains(err.Error(), "(24, 32)") {
		t.Errorf("mismatched -init file: error %v, want one naming -init, proj.weight and the expected shape (24, 32)", err)
	}
}

// torchPython returns Debian's python3 when it has torch and numpy, or skips.
func torchPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("PyTorch interoperability skipped: /usr/bin/python3 cannot import torch and numpy (apt-get install python3-torch)")
	}
	return py
}

// Weights made by torch_model.py load with -init, and PyTorch's module and
// this program's model compute the same loss from them: PyTorch in float64
// from the safetensors file, Go in float32 through the library's ops. The
// other direction too: PyTorch loads a model.safetensors written here.
func TestPyTorchWeights(t *testing.T) {
	py := torchPython(t)
	text := tinyText(t, 3000)
	dir := t.TempDir()
	s := CharFFN{Context: 4, Embed: 8, Dim: 16, Hidden: 32, Layers: 2}
	sizes := []string{"--text", text, "--context", "4", "--embed", "8", "--dim", "16", "--hidden", "32", "--layers", "2"}
	torchInit := filepath.Join(dir, "torch.safetensors")
	if out, err := exec.Command(py, append([]string{"torch_model.py", "--init", torchInit, "--seed", "3"}, sizes...)...).CombinedOutput(); err != nil {
		t.Fatalf("torch_model.py --init: %v\n%s", err, out)
	}
	// torchLosses scores files with PyTorch's GELU model (one Python
	// start: importing torch takes seconds).
	torchLosses := func(files ...string) []float64 {
		args := append(append([]string{"torch_model.py", "--act", "gelu", "--windows", "0"}, sizes...), "--check")
		out, err := exec.Command(py, append(args, files...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("torch_model.py --check: %v\n%s", err, out)
		}
		var losses []float64
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var res struct{ Loss float64 }
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatalf("torch_model.py --check output %q: %v", out, err)
			}
			losses = append(losses, res.Loss)
		}
		if len(losses) != len(files) {
			t.Fatalf("torch_model.py --check: %d results for %d files:\n%s", len(losses), len(files), out)
		}
		return losses
	}

	// Every window of the text, as torch_model.py --check scores them.
	raw, _ := os.ReadFile(text)
	vocab, err := datasets.NewCharVocab(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	windows, err := vocab.Windows(string(raw), s.Context)
	if err != nil {
		t.Fatal(err)
	}
	s.Vocab = vocab.Size()
	goLoss := func(file string, act activation.Activation) float64 {
		m, err := CharFFNModel(s, act, windows.Len(), 99)
		if err != nil {
			t.Fatal(err)
		}
		if err := loadInit(file, m, s); err != nil {
			t.Fatal(err)
		}
		mach, err := m.Graph.Compile(m.Loss, graph.WithRespectTo())
		if err != nil {
			t.Fatal(err)
		}
		x := tensor.New(tensor.WithShape(windows.Len(), s.Context), tensor.WithBacking(windows.X))
		y := make([]float32, windows.Len())
		for i, l := range windows.Labels {
			y[i] = float32(l)
		}
		mach.Set(m.Input, x)
		mach.Set(m.Target, tensor.New(tensor.WithShape(len(y)), tensor.WithBacking(y)))
		if err := mach.Run(); err != nil {
			t.Fatal(err)
		}
		l, err := mach.Loss()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Go → PyTorch: train briefly here, then both score the saved model.
	c := tiny(t, text)
	c.Steps, c.Acts, c.ChunkLen, c.ValWindows = 10, []activation.Activation{activation.GELU}, 500, 0
	if _, err := run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	trained := filepath.Join(c.Out, "gelu", "seed1", "model.safetensors")
	want := torchLosses(torchInit, trained)
	for i, file := range []string{torchInit, trained} {
		got := goLoss(file, activation.GELU)
		if math.Abs(got-want[i]) > 1e-6*want[i] {
			t.Errorf("%s: Go loss %.9g, PyTorch %.9g", filepath.Base(file), got, want[i])
		}
		t.Logf("%s: loss on %d windows: Go (float32) %.9g, PyTorch (float64) %.9g", filepath.Base(file), windows.Len(), got, want[i])
	}
}

// BenchmarkTrainStep times one training step (forward, backward, SGD
// update) of the default model on a batch of 512 windows:
//
//	go test ./examples/transformer-ffn -run '^$' -bench TrainStep -benchtime 10x
func BenchmarkTrainStep(b *testing.B) {
	for _, act := range []activation.Activation{activation.ReLU, activation.GELU} {
		b.Run(act.Name(), func(b *testing.B) {
			const rows = 512
			s := CharFFN{Vocab: 91, Context: 8, Embed: 32, Dim: 256, Hidden: 1024, Layers: 2}
			m, err := CharFFNModel(s, act, rows, 1)
			if err != nil {
				b.Fatal(err)
			}
			mach, err := m.Graph.Compile(m.Loss)
			if err != nil {
				b.Fatal(err)
			}
			x, y := make([]float32, rows*s.Context), make([]float32, rows)
			for i := range x {
				x[i] = float32(i * 7 % s.Vocab)
			}
			for i := range y {
				y[i] = float32(i * 13 % s.Vocab)
			}
			mach.Set(m.Input, tensor.New(tensor.WithShape(rows, s.Context), tensor.WithBacking(x)))
			mach.Set(m.Target, tensor.New(tensor.WithShape(rows), tensor.WithBacking(y)))
			extest.BenchSteps(b, mach, &optim.SGD{LearningRate: 0.01, Momentum: 0.9}, m.Graph.ParamTensors(), float64(rows), "tokens/s")
		})
	}
}
