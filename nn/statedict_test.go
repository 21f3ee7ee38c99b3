package nn_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"gorgonia.org/tensor"
)

// nanoGPT's state_dict order for n_layer = 2, bias=False, on torch 1.x
// (mask buffers registered), written out from PyTorch's rule: a module's
// own parameters, then its own buffers, then its children in registration
// order; a tied parameter is listed under each module that holds it.
func TestGPTStateDictIsNanoGPTs(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	m, err := nn.NewGPT(g, "student", nn.GPTConfig{BlockSize: 16, VocabSize: 50, Layers: 2, Heads: 2, Dim: 8, NoBias: true})
	if err != nil {
		t.Fatal(err)
	}
	sd, err := nn.StateDict(m, nn.CausalMaskBuffers())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"transformer.wte.weight(50, 8)", "transformer.wpe.weight(16, 8)"}
	for i := range 2 {
		h := fmt.Sprintf("transformer.h.%d.", i)
		want = append(want, h+"ln_1.weight(8)", h+"attn.bias(1, 1, 16, 16)", h+"attn.c_attn.weight(24, 8)", h+"attn.c_proj.weight(8, 8)",
			h+"ln_2.weight(8)", h+"mlp.c_fc.weight(32, 8)", h+"mlp.c_proj.weight(8, 32)")
	}
	want = append(want, "transformer.ln_f.weight(8)", "lm_head.weight(50, 8)")
	var got []string
	for _, e := range sd {
		got = append(got, fmt.Sprintf("%s%v", e.Name, e.Value.Shape()))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state dict\n%v\nwant\n%v", got, want)
	}
	if sd[len(sd)-1].Value != m.WTE.Value() {
		t.Error("lm_head.weight is not the tied transformer.wte.weight")
	}
	mask := graph.Float64s(sd[3].Value)
	for r := range 16 {
		for c := range 16 {
			if want := map[bool]float64{true: 1, false: 0}[c <= r]; mask[r*16+c] != want {
				t.Fatalf("mask[%d][%d] = %v, want %v", r, c, mask[r*16+c], want)
			}
		}
	}
	plain, _ := nn.StateDict(m)
	if len(plain) != len(sd)-2 {
		t.Errorf("without CausalMaskBuffers: %d entries, want %d", len(plain), len(sd)-2)
	}
	lin, _ := nn.NewLinear(g, "lin", 2, 2)
	if _, err := nn.StateDict(lin, nn.CausalMaskBuffers()); err == nil || !strings.Contains(err.Error(), "has no causal-mask buffers") {
		t.Errorf("masks of a Linear: %v", err)
	}
}

// The strictness rules of loading, without files or torch: a state dict
// as nanoGPT saves it (the tied copy, the masks) fits, with names relative
// to any prefix; each way of breaking it is an error naming the entry,
// and every problem is listed at once.
func TestCheckStateDictStrictness(t *testing.T) {
	cfg := nn.GPTConfig{BlockSize: 6, VocabSize: 7, Layers: 2, Heads: 2, Dim: 8}
	_, src := kvModel(t, tensor.Float64, cfg, 3) // every entry random
	_, dst := kvModel(t, tensor.Float32, cfg, 4)
	good, err := nn.StateDict(src, nn.CausalMaskBuffers())
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.CheckStateDict(dst, good); err != nil {
		t.Fatalf("nanoGPT's own state dict: %v", err)
	}
	g, _ := graph.New(tensor.Float64, 1)
	prefixed, _ := nn.NewGPT(g, "teacher", cfg)
	if err := nn.CheckStateDict(prefixed, good); err != nil {
		t.Errorf("into a GPT under a prefix: %v", err)
	}

	edit := func(f func(sd []graph.NamedTensor) []graph.NamedTensor) []graph.NamedTensor {
		sd := make([]graph.NamedTensor, len(good))
		for i, e := range good {
			sd[i] = graph.NamedTensor{Name: e.Name, Value: e.Value.Clone().(*tensor.Dense)}
		}
		return f(sd)
	}
	at := func(sd []graph.NamedTensor, name string) int {
		i := slices.IndexFunc(sd, func(e graph.NamedTensor) bool { return e.Name == name })
		if i < 0 {
			t.Fatalf("no %q", name)
		}
		return i
	}
	untied := cfg
	untied.UntieWeights = true
	_, untiedModel := kvModel(t, tensor.Float64, untied, 5)
	for _, c := range []struct {
		name  string
		model *nn.GPT
		sd    []graph.NamedTensor
		want  []string
	}{
		{"extra key", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			return append(sd, graph.NamedTensor{Name: "transformer.h.0.attn.masked_bias", Value: sd[0].Value})
		}), []string{`unexpected "transformer.h.0.attn.masked_bias": not in this GPT's state dict`}},
		{"mask of a block the model lacks", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			return append(sd, graph.NamedTensor{Name: "transformer.h.2.attn.bias", Value: sd[at(sd, "transformer.h.0.attn.bias")].Value})
		}), []string{`unexpected "transformer.h.2.attn.bias"`}},
		{"wrong mask", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			sd[at(sd, "transformer.h.1.attn.bias")].Value.Float64s()[1] = 1 // row 0 sees position 1
			return sd
		}), []string{`unexpected "transformer.h.1.attn.bias": not the causal mask: element 1 (row 0, column 1) is 1, want 0`}},
		{"mask of another block size", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			v, _ := graph.FromFloat64s(tensor.Float64, make([]float64, 25), 1, 1, 5, 5)
			sd[at(sd, "transformer.h.0.attn.bias")].Value = v
			return sd
		}), []string{`"transformer.h.0.attn.bias": a causal mask of shape (1, 1, 5, 5), want (1, 1, 6, 6)`}},
		{"untied copy with other values", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			sd[at(sd, "lm_head.weight")].Value.Float64s()[9] += 1e-9
			return sd
		}), []string{`unexpected "lm_head.weight": differs from transformer.wte.weight (element 9:`, "set GPTConfig.UntieWeights"}},
		{"missing key", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			return slices.Delete(sd, at(sd, "transformer.h.1.ln_2.bias"), at(sd, "transformer.h.1.ln_2.bias")+1)
		}), []string{`missing "transformer.h.1.ln_2.bias" (8)`}},
		{"wrong shape", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			v, _ := graph.FromFloat64s(tensor.Float64, make([]float64, 9), 9)
			sd[at(sd, "transformer.ln_f.weight")].Value = v
			return sd
		}), []string{`"transformer.ln_f.weight" has shape (9), the model's is (8)`}},
		{"repeated key", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			return append(sd, sd[at(sd, "transformer.wpe.weight")])
		}), []string{`"transformer.wpe.weight" appears twice`}},
		{"every problem at once", dst, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			sd = slices.Delete(sd, 0, 2) // wte and wpe
			return append(sd, graph.NamedTensor{Name: "head.weight", Value: sd[0].Value})
		}), []string{`missing "transformer.wte.weight"`, `missing "transformer.wpe.weight"`, `unexpected "head.weight"`,
			`unexpected "lm_head.weight": the tied copy of transformer.wte.weight, which is missing`}},
		{"untied model, head missing", untiedModel, edit(func(sd []graph.NamedTensor) []graph.NamedTensor {
			return slices.Delete(sd, at(sd, "lm_head.weight"), at(sd, "lm_head.weight")+1)
		}), []string{`missing "lm_head.weight" (7, 8)`}},
	} {
		err := nn.CheckStateDict(c.model, c.sd)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", c.name, err, w)
			}
		}
	}
	// An untied model takes the tied copy as its own head.
	if err := nn.CheckStateDict(untiedModel, good); err != nil {
		t.Errorf("untied model, nanoGPT's tied state dict: %v", err)
	}
}
