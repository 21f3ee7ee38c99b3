package train_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"gorgonia.org/tensor"
)

// bits returns every parameter value of m, in order, as float64 bits.
func bits(t *testing.T, m nn.Module) []uint64 {
	t.Helper()
	ps, err := nn.ParamTensors(m)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, p := range ps {
		for _, v := range graph.Float64s(p.Value) {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}

func mlpOf(t *testing.T, act activation.Activation, seed uint64) *nn.MLP {
	t.Helper()
	g, _ := graph.New(tensor.Float32, seed)
	m, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{8, 8}, Out: 3, Activation: act})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A ReLU model's weights do not load into a GELU model of the same shapes
// unless asked (AllowArgsMismatch); the refusal names every difference and
// changes nothing.
func TestLoadWeightsChecksModelArgs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "relu.safetensors")
	relu := mlpOf(t, activation.ReLU, 1)
	if err := train.SaveWeights(path, relu); err != nil {
		t.Fatal(err)
	}
	gelu := mlpOf(t, activation.GELU, 2)
	before := bits(t, gelu)
	err := train.LoadWeights(path, gelu)
	if err == nil || !strings.Contains(err.Error(), `activation: file "relu", model "gelu"`) || !strings.Contains(err.Error(), "train.AllowArgsMismatch()") {
		t.Fatalf("ReLU weights into a GELU model: %v, want an error naming the activations and the option", err)
	}
	if !slices.Equal(bits(t, gelu), before) {
		t.Error("the refused load changed the model")
	}
	if err := train.LoadWeights(path, gelu, train.AllowArgsMismatch()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bits(t, gelu), bits(t, relu)) {
		t.Error("AllowArgsMismatch: the weights did not load")
	}

	// A stack of FeedForward blocks in a Sequential: its Args are the
	// blocks', by index.
	ffns := func(act activation.Activation) nn.Sequential {
		g, _ := graph.New(tensor.Float32, 1)
		var s nn.Sequential
		for i := range 2 {
			f, err := nn.NewFeedForward(g, fmt.Sprintf("blocks.%d", i), nn.FeedForwardConfig{Dim: 4, Activation: act})
			if err != nil {
				t.Fatal(err)
			}
			s = append(s, f)
		}
		return s
	}
	if err := train.SaveWeights(path, ffns(activation.ReLU)); err != nil {
		t.Fatal(err)
	}
	err = train.LoadWeights(path, ffns(activation.GELU))
	if err == nil || !strings.Contains(err.Error(), `0.activation: file "relu", model "gelu"; 1.activation: file "relu", model "gelu"`) {
		t.Errorf("ReLU FeedForward stack into a GELU one: %v", err)
	}

	// Every difference is listed, including keys only one side has.
	gpt := func(cfg nn.GPTConfig) *nn.GPT {
		g, _ := graph.New(tensor.Float64, 1)
		cfg.BlockSize, cfg.VocabSize, cfg.Layers, cfg.Heads, cfg.Dim = 4, 5, 1, 2, 4
		m, err := nn.NewGPT(g, "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := train.SaveWeights(path, gpt(nn.GPTConfig{Activation: activation.ReLU, Eps: 1e-6})); err != nil {
		t.Fatal(err)
	}
	err = train.LoadWeights(path, gpt(nn.GPTConfig{Gate: nn.SwiGLU, Hidden: 16}))
	for _, want := range []string{`activation: file "relu", model (none)`, `eps: file "1e-06", model "1e-05"`, `gate: file (none), model "glu:silu"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReLU GPT into a SwiGLU GPT: %v\nwant it to say %s", err, want)
		}
	}
}

// SaveWeights writes the module's Args as model_args, a JSON object with
// sorted keys, and the state dict under names relative to the module.
func TestSaveWeightsMetadata(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	lin, _ := nn.NewLinear(g, "encoder.proj", 3, 2)
	path := filepath.Join(t.TempDir(), "lin.safetensors")
	if err := train.SaveWeights(path, lin); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Metadata["model_args"], `{"bias":"true","in":"3","out":"2"}`; got != want {
		t.Errorf("model_args %s, want %s", got, want)
	}
	var names []string
	for _, e := range f.Tensors {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"weight", "bias"}) || f.Metadata["format"] != "pt" {
		t.Errorf("tensors %v, metadata %v; want weight and bias, format pt", names, f.Metadata)
	}
}

// A GPT's weights move between prefixes (a teacher's into a root model and
// into a student), bit for bit; nanoGPT's float32 state dict without
// model_args (the tied copy, the masks) loads into a float64 model; a file
// with a wrong mask is refused and changes nothing.
func TestLoadWeightsAcrossPrefixesAndNanoGPTFiles(t *testing.T) {
	cfg := nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 2, Heads: 2, Dim: 4, NoBias: true}
	g, _ := graph.New(tensor.Float64, 1)
	teacher, _ := nn.NewGPT(g, "teacher", cfg)
	student, _ := nn.NewGPT(g, "student", cfg)
	g2, _ := graph.New(tensor.Float64, 2)
	root, _ := nn.NewGPT(g2, "", cfg)
	dir := t.TempDir()
	path := filepath.Join(dir, "teacher.safetensors")
	if err := train.SaveWeights(path, teacher); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*nn.GPT{root, student} {
		if err := train.LoadWeights(path, m); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bits(t, m), bits(t, teacher)) {
			t.Errorf("%q: the teacher's weights did not load bit for bit", m.Name)
		}
	}

	sd, err := nn.StateDict(teacher, nn.CausalMaskBuffers())
	if err != nil {
		t.Fatal(err)
	}
	var f32 []graph.NamedTensor
	for _, e := range sd {
		v, _ := graph.FromFloat64s(tensor.Float32, graph.Float64s(e.Value), e.Value.Shape()...)
		f32 = append(f32, graph.NamedTensor{Name: e.Name, Value: v})
	}
	nano := filepath.Join(dir, "nano.safetensors")
	if err := safetensors.Save(nano, f32, nil); err != nil {
		t.Fatal(err)
	}
	g3, _ := graph.New(tensor.Float64, 3)
	fresh, _ := nn.NewGPT(g3, "", cfg)
	if err := train.LoadWeights(nano, fresh); err != nil {
		t.Fatalf("nanoGPT's float32 state dict: %v", err)
	}
	want, _ := nn.ParamTensors(teacher)
	got, _ := nn.ParamTensors(fresh)
	for i := range want {
		for j, v := range graph.Float64s(want[i].Value) {
			if g := graph.Float64s(got[i].Value)[j]; g != float64(float32(v)) {
				t.Fatalf("%s[%d] = %v, want %v rounded to float32", got[i].Name, j, g, v)
			}
		}
	}

	mask := slices.IndexFunc(f32, func(e graph.NamedTensor) bool { return e.Name == "transformer.h.1.attn.bias" })
	f32[mask].Value.Float32s()[3] = 1 // row 0 sees position 3
	if err := safetensors.Save(nano, f32, nil); err != nil {
		t.Fatal(err)
	}
	before := bits(t, root)
	err = train.LoadWeights(nano, root)
	if err == nil || !strings.Contains(err.Error(), `unexpected "transformer.h.1.attn.bias": not the causal mask`) {
		t.Errorf("a wrong mask: %v", err)
	}
	if !slices.Equal(bits(t, root), before) {
		t.Error("the refused load changed the model")
	}
	if err := train.LoadWeights(nano, nil); err == nil || !strings.Contains(err.Error(), "nil module") {
		t.Errorf("nil module: %v", err)
	}
}
