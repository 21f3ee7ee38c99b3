package train_test

// The files a run leaves for a module: what LoadWeights reads of them, and
// (Model.Module) what PyTorch's strict load_state_dict reads.

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"github.com/geluproject/gelu/train/torchtest"
	"gorgonia.org/tensor"
)

// regressionMLP is the MLP of the regression setup, built afresh on a
// graph of its own with another seed (other initial weights).
func regressionMLP(t *testing.T, seed uint64) *nn.MLP {
	t.Helper()
	g, _ := graph.New(tensor.Float64, seed)
	m, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{16}, Out: 2, Dropout: 0.1, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// graphBits is every parameter value of g, in order, as float64 bits.
func graphBits(g *graph.Graph) []uint64 {
	var out []uint64
	for _, p := range g.ParamTensors() {
		for _, v := range graph.Float64s(p.Value) {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}

// A trainer's model file and checkpoint of a model built under a prefix
// (nn.NewMLP(g, "mlp", …)) hold its full graph names; LoadWeights reads
// them into the same MLP built elsewhere, as it reads the relative names
// SaveWeights writes. A file of a graph holding more than the module is
// refused with the fix named.
func TestLoadWeightsReadsFullGraphNames(t *testing.T) {
	dir := t.TempDir()
	tr, s := newTrainer(t, train.Config{MaxSteps: 3, CheckpointEvery: 3, Dir: dir})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	trained := graphBits(s.model.Graph)
	for _, name := range []string{"model.safetensors", "checkpoint.safetensors"} {
		m := regressionMLP(t, 99)
		if err := train.LoadWeights(filepath.Join(dir, name), m); err != nil {
			t.Errorf("%s into nn.NewMLP(g, \"mlp\", …): %v", name, err)
			continue
		}
		if !slices.Equal(bits(t, m), trained) {
			t.Errorf("%s: the trained weights did not load bit for bit", name)
		}
	}
	rel := filepath.Join(dir, "relative.safetensors")
	if err := train.SaveWeights(rel, regressionMLP(t, 5)); err != nil {
		t.Fatal(err)
	}
	m := regressionMLP(t, 99)
	if err := train.LoadWeights(rel, m); err != nil || !slices.Equal(bits(t, m), bits(t, regressionMLP(t, 5))) {
		t.Errorf("relative names: %v", err)
	}

	// Two modules in one graph: a file of both fits neither.
	g, _ := graph.New(tensor.Float64, 1)
	a, _ := nn.NewMLP(g, "a", nn.MLPConfig{In: 2, Hidden: []int{3}, Out: 1})
	if _, err := nn.NewMLP(g, "b", nn.MLPConfig{In: 2, Hidden: []int{3}, Out: 1}); err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(dir, "both.safetensors")
	if err := train.SaveGraphWeights(both, g); err != nil {
		t.Fatal(err)
	}
	err := train.LoadWeights(both, a)
	for _, want := range []string{`unexpected "b.layers.0.weight"`, "train.LoadGraphWeights", "Model.Module"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a file of two modules into one: %v\nwant it to say %s", err, want)
		}
	}
	// Every name there, one shape wrong: the error is the shape alone.
	g2, _ := graph.New(tensor.Float64, 1)
	if _, err := nn.NewMLP(g2, "a", nn.MLPConfig{In: 2, Hidden: []int{4}, Out: 1}); err != nil {
		t.Fatal(err)
	}
	if err := train.SaveGraphWeights(both, g2); err != nil {
		t.Fatal(err)
	}
	err = train.LoadWeights(both, a)
	if err == nil || !strings.Contains(err.Error(), `"layers.0.weight" has shape (4, 2), the model's is (3, 2)`) || strings.Contains(err.Error(), "LoadGraphWeights") {
		t.Errorf("a wider MLP's file: %v, want the shape named and no advice about other files", err)
	}
}

// moduleGPT is a small float64 GPT under the prefix "student" (nn's
// interop tests' shape: block 6, vocab 7, 2 layers, 2 heads, width 8),
// with training and validation streams of ids, trained by a trainer whose
// Model names the GPT as its Module (when module) with nanoGPT's torch
// 1.x masks.
func moduleGPT(t *testing.T, dir string, module bool) (*train.Trainer, *nn.GPT, *datasets.TokenStream) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, 1)
	gpt, err := nn.NewGPT(g, "student", nn.GPTConfig{BlockSize: 6, VocabSize: 7, Layers: 2, Heads: 2, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", 4, 6)
	y, _ := g.Input("y", 4, 6)
	logits, loss, err := gpt.Loss(x, y)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, 600)
	for i := range ids {
		ids[i] = (i*i + i/3) % 7
	}
	trainIDs, valIDs, _ := datasets.SplitTokens(ids, 0.2)
	trainData, err1 := datasets.NewTokenStream(trainIDs, datasets.TokenStreamConfig{BatchSize: 4, BlockSize: 6, Seed: 1})
	valData, err2 := datasets.NewTokenStream(valIDs, datasets.TokenStreamConfig{BatchSize: 4, BlockSize: 6, Tile: true})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	m := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}
	if module {
		m.Module, m.StateDict = gpt, []nn.StateDictOption{nn.CausalMaskBuffers()}
	}
	tr, err := train.New(m, optim.NanoGPTAdamW(g.ParamTensors(), 1e-2, 0.1), trainData, valData,
		train.Config{MaxSteps: 8, EvalEvery: 2, SaveBest: true, CheckpointEvery: 8, Dir: dir, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tr, gpt, valData
}

// tensorNames lists the names of the tensors in the file at path.
func tensorNames(t *testing.T, path string) ([]string, map[string]string) {
	t.Helper()
	f, err := safetensors.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range f.Tensors {
		names = append(names, e.Name)
	}
	return names, f.Metadata
}

// With Model.Module, model.safetensors and best.safetensors hold the
// module's PyTorch state dict (relative names, the tied lm_head.weight
// copy, the masks of Model.StateDict) and its Args; the checkpoint still
// holds the graph's parameters; without Module the files hold the graph's
// parameters, as they always did.
func TestModuleFilesAreStateDicts(t *testing.T) {
	dir := t.TempDir()
	_, gpt, _ := moduleGPT(t, dir, true)
	sd, _ := nn.StateDict(gpt, nn.CausalMaskBuffers())
	var want []string
	for _, e := range sd {
		want = append(want, e.Name)
	}
	args, _ := json.Marshal(gpt.Args())
	for _, name := range []string{"model.safetensors", "best.safetensors"} {
		got, meta := tensorNames(t, filepath.Join(dir, name))
		if !slices.Equal(got, want) || !slices.Contains(got, "lm_head.weight") || !slices.Contains(got, "transformer.h.1.attn.bias") {
			t.Errorf("%s holds %v,\nwant the GPT's state dict %v", name, got, want)
		}
		if meta["model_args"] != string(args) {
			t.Errorf("%s: model_args %s, want the GPT's Args %s", name, meta["model_args"], args)
		}
		fresh := regressionGPT(t)
		if err := train.LoadWeights(filepath.Join(dir, name), fresh); err != nil {
			t.Errorf("%s into a GPT: %v", name, err)
		}
	}
	var graphNames []string
	for _, p := range gpt.Parameters() {
		graphNames = append(graphNames, p.Name())
	}
	if got, _ := tensorNames(t, filepath.Join(dir, "checkpoint.safetensors")); !slices.Equal(got[:len(graphNames)], graphNames) || slices.Contains(got, "lm_head.weight") {
		t.Errorf("checkpoint holds %v, want the graph's parameters %v first and no lm_head.weight", got, graphNames)
	}

	dir2 := t.TempDir()
	moduleGPT(t, dir2, false)
	if got, _ := tensorNames(t, filepath.Join(dir2, "model.safetensors")); !slices.Equal(got, graphNames) {
		t.Errorf("without Module model.safetensors holds %v, want the graph's parameters %v", got, graphNames)
	}
}

// regressionGPT is moduleGPT's GPT, built afresh at the root.
func regressionGPT(t *testing.T) *nn.GPT {
	t.Helper()
	g, _ := graph.New(tensor.Float64, 7)
	m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 6, VocabSize: 7, Layers: 2, Heads: 2, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Model.Module must be built on the graph trained; Model.StateDict needs
// a Module, and options that fit it.
func TestModuleIsChecked(t *testing.T) {
	s := regression(t, tensor.Float64, regressionData(1))
	other := regressionMLP(t, 3) // the same names on another graph
	for _, c := range []struct {
		module nn.Module
		opts   []nn.StateDictOption
		want   string
	}{
		{other, nil, `Model.Module's parameter "mlp.layers.0.weight" is not a parameter of Model.Graph`},
		{nil, []nn.StateDictOption{nn.CausalMaskBuffers()}, "Model.StateDict is set without Model.Module"},
		{regressionGPT(t), nil, "is not a parameter of Model.Graph"},
	} {
		m := s.model
		m.Module, m.StateDict = c.module, c.opts
		if _, err := train.New(m, s.opt, s.trainData, s.valData, train.Config{Quiet: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Module %T, options %d: %v, want an error containing %q", c.module, len(c.opts), err, c.want)
		}
	}
}

// The test of the seam: the files a trainer with Model.Module writes for a
// GPT load into nanoGPT's GPT (nn/testdata/nanogpt.py, torch 1.x layout)
// with a strict load_state_dict, and its loss on a validation batch is the
// trainer's. Skipped without a python3 with torch.
//
// Tolerance: both sides compute in float64 with the shape whose logits
// nn/nanogpt_test.go bounds by interopTol = 3.6e-11 relative to their
// scale (at least 1); the loss, a mean of log-softmax values, moves by at
// most 2× the largest logit error (its derivative in each logit is at most
// 1 in magnitude, summed over a row to at most 2, averaged over rows), so
// 1e-10 relative to max(1, |loss|) bounds rounding. A weight in the wrong
// place is refused by the strict load or moves the loss far more.
func TestModuleFilesLoadIntoNanoGPT(t *testing.T) {
	if testing.Short() {
		t.Skip("nanoGPT strict load skipped in -short mode (one python run)")
	}
	py := torchtest.Python(t, "nanoGPT strict load")
	dir := t.TempDir()
	tr, gpt, valData := moduleGPT(t, dir, true)
	b, err := valData.Batch(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := func(f string) [][]int {
		v, _ := b.Field(f)
		var out [][]int
		for r := range v.Shape[0] {
			out = append(out, v.IDs[r*v.Shape[1]:(r+1)*v.Shape[1]])
		}
		return out
	}
	cfg := gpt.Config
	job, _ := json.Marshal(map[string]any{"torch2": false, "files": []string{"model.safetensors", "best.safetensors"}, "x": rows("x"), "y": rows("y"),
		"model_args": map[string]any{"block_size": cfg.BlockSize, "vocab_size": cfg.VocabSize, "n_layer": cfg.Layers, "n_head": cfg.Heads, "n_embd": cfg.Dim, "bias": !cfg.NoBias, "dropout": cfg.Dropout}})
	if err := os.WriteFile(filepath.Join(dir, "job.json"), job, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join("testdata", "nanogpt_load.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("nanogpt_load.py: %v\n%s", err, out)
	}
	var res struct {
		Losses map[string]float64
		Errors map[string]string
		Torch  string
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "loaded.json"))
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	for name, e := range res.Errors {
		t.Errorf("PyTorch %s: nanoGPT's strict load_state_dict refused the trainer's %s: %s", res.Torch, name, e)
	}
	one := fixed{b}
	for _, name := range []string{"model.safetensors", "best.safetensors"} {
		if name == "best.safetensors" {
			if err := train.LoadWeights(filepath.Join(dir, name), gpt); err != nil {
				t.Fatal(err)
			}
		}
		e, err := tr.Evaluate(one)
		if err != nil {
			t.Fatal(err)
		}
		torchLoss, ok := res.Losses[name]
		if d := math.Abs(torchLoss - e.Loss); !ok || !(d <= 1e-10*math.Max(1, math.Abs(e.Loss))) {
			t.Errorf("%s: nanoGPT's loss %v, the trainer's %v (differ by %.3g)", name, torchLoss, e.Loss, d)
		} else {
			t.Logf("%s: PyTorch %s loads it strictly; loss %v, the trainer's %v (differ by %.3g)", name, res.Torch, torchLoss, e.Loss, d)
		}
	}
}
