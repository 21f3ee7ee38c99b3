package nn_test

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// nanoGPT's state_dict for n_layer = 2 (bias=True, tied head), in its order.
func TestGPTStateDictNames(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	if _, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 16, VocabSize: 50, Layers: 2, Heads: 2, Dim: 8}); err != nil {
		t.Fatal(err)
	}
	want := []string{"transformer.wte.weight(50, 8)", "transformer.wpe.weight(16, 8)"}
	for i := 0; i < 2; i++ {
		h := fmt.Sprintf("transformer.h.%d.", i)
		want = append(want, h+"ln_1.weight(8)", h+"ln_1.bias(8)",
			h+"attn.c_attn.weight(24, 8)", h+"attn.c_attn.bias(24)", h+"attn.c_proj.weight(8, 8)", h+"attn.c_proj.bias(8)",
			h+"ln_2.weight(8)", h+"ln_2.bias(8)",
			h+"mlp.c_fc.weight(32, 8)", h+"mlp.c_fc.bias(32)", h+"mlp.c_proj.weight(8, 32)", h+"mlp.c_proj.bias(8)")
	}
	want = append(want, "transformer.ln_f.weight(8)", "transformer.ln_f.bias(8)")
	if got := paramNames(g); !reflect.DeepEqual(got, want) {
		t.Errorf("tied GPT params\n%v\nwant\n%v", got, want)
	}
	g2, _ := graph.New(tensor.Float32, 1)
	if _, err := nn.NewGPT(g2, "", nn.GPTConfig{BlockSize: 16, VocabSize: 50, Layers: 2, Heads: 2, Dim: 8, NoBias: true, UntieWeights: true}); err != nil {
		t.Fatal(err)
	}
	names := paramNames(g2)
	if last := names[len(names)-1]; last != "lm_head.weight(50, 8)" {
		t.Errorf("untied GPT's last parameter %s, want lm_head.weight(50, 8)", last)
	}
	for _, n := range names {
		if strings.Contains(n, "c_attn.bias") || strings.Contains(n, "c_fc.bias") {
			t.Errorf("NoBias GPT has %s", n)
		}
	}
}

// A gated MLP of width GatedHidden(4d) has as many weights as the ungated
// MLP of width 4d (Shazeer 2020): 3·d·(8d/3) = 2·d·4d. Counted from the
// graph's parameters, against the closed forms.
func TestGatedMLPParameterCounts(t *testing.T) {
	const d = 24 // 8d/3 = 64 exactly
	count := func(cfg nn.MLPBlockConfig) (weights, biases int) {
		g, _ := graph.New(tensor.Float64, 1)
		if _, err := nn.NewMLPBlock(g, "mlp", cfg); err != nil {
			t.Fatal(err)
		}
		for _, p := range g.ParamTensors() {
			if p.Value.Dims() == 2 {
				weights += p.Value.Len()
			} else {
				biases += p.Value.Len()
			}
		}
		return
	}
	w0, b0 := count(nn.MLPBlockConfig{Dim: d})
	if w0 != 2*d*4*d || b0 != 4*d+d {
		t.Errorf("ungated: %d weights, %d biases, want %d and %d", w0, b0, 2*d*4*d, 5*d)
	}
	for _, gate := range []nn.Gate{nn.GLU, nn.GEGLU, nn.GEGLUTanh, nn.SwiGLU, nn.ReGLU, nn.GateOf(activation.ELU)} {
		w, b := count(nn.MLPBlockConfig{Dim: d, Gate: gate})
		if w != w0 || b != 2*64+d {
			t.Errorf("%v: %d weights, %d biases, want %d (as ungated) and %d", gate, w, b, w0, 2*64+d)
		}
	}
	if nn.GatedHidden(3072) != 2048 || nn.GatedHidden(1024) != 683 {
		t.Errorf("GatedHidden(3072) = %d, GatedHidden(1024) = %d, want 2048 and 683", nn.GatedHidden(3072), nn.GatedHidden(1024))
	}
}

// The gated MLP computes c_proj(gate(c_fc(x)) ⊙ c_up(x)): checked against
// the same formula evaluated from the parameters with the float64 reference
// of each gate.
func TestGatedMLPForward(t *testing.T) {
	const d, h, rows = 3, 4, 2
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for _, c := range []struct {
		gate nn.Gate
		f    func(float64) float64
	}{{nn.GLU, sigmoid}, {nn.GEGLU, activation.GELU.F}, {nn.SwiGLU, activation.SiLU.F}, {nn.ReGLU, activation.ReLU.F}} {
		g, _ := graph.New(tensor.Float64, 2)
		m, err := nn.NewMLPBlock(g, "mlp", nn.MLPBlockConfig{Dim: d, Hidden: h, Gate: c.gate})
		if err != nil {
			t.Fatal(err)
		}
		xv := randn(9, rows, d)
		got := forwardOutput(t, g, m.Forward, xv)
		p := map[string][]float64{}
		for _, pt := range g.ParamTensors() {
			p[pt.Name] = pt.Value.Float64s()
		}
		lin := func(name string, in []float64, nin, nout int) []float64 {
			out := make([]float64, nout)
			for o := 0; o < nout; o++ {
				out[o] = p[name+".bias"][o]
				for i := 0; i < nin; i++ {
					out[o] += p[name+".weight"][o*nin+i] * in[i]
				}
			}
			return out
		}
		for r := 0; r < rows; r++ {
			xr := xv.Float64s()[r*d : (r+1)*d]
			a, u := lin("mlp.c_fc", xr, d, h), lin("mlp.c_up", xr, d, h)
			for j := range a {
				a[j] = c.f(a[j]) * u[j]
			}
			want := lin("mlp.c_proj", a, h, d)
			for j := range want {
				if math.Abs(got[r*d+j]-want[j]) > 1e-14 {
					t.Errorf("%v: row %d output %d = %v, want %v", c.gate, r, j, got[r*d+j], want[j])
				}
			}
		}
	}
}

func TestTransformerGradients(t *testing.T) {
	mask := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 1, 1, 1, 0, 1}))
	for _, c := range []struct {
		name string
		cfg  nn.BlockConfig
		mask bool
	}{
		{"pre-LN causal", nn.BlockConfig{Dim: 4, Heads: 2, Causal: true, Hidden: 6}, false},
		{"post-LN padded", nn.BlockConfig{Dim: 4, Heads: 2, PostLN: true, Hidden: 6}, true},
		{"SwiGLU", nn.BlockConfig{Dim: 4, Heads: 1, Causal: true, Gate: nn.SwiGLU, Hidden: 5}, false},
		{"GLU", nn.BlockConfig{Dim: 4, Heads: 2, Gate: nn.GLU, Hidden: 3}, false},
	} {
		check(t, "Block "+c.name, func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			b, err := nn.NewBlock(g, "h.0", c.cfg)
			if err != nil {
				return nil, err
			}
			var m *G.Node
			if c.mask {
				m = G.NewTensor(g.ExprGraph(), tensor.Float64, 2, G.WithShape(2, 3), G.WithName("mask"), G.WithValue(mask))
			}
			return b.ForwardPadded(in[0], m)
		}, randn(3, 2, 3, 4))
	}
	ids := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 4, 0, 3, 3, 2}))
	check(t, "GPT", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4, PyTorchInit: true})
		if err != nil {
			return nil, err
		}
		x := G.NewTensor(g.ExprGraph(), tensor.Float64, 2, G.WithShape(2, 3), G.WithName("ids"), G.WithValue(ids))
		logits, err := m.Forward(x)
		if err != nil {
			return nil, err
		}
		return nn.Act(activation.GELU).Forward(logits)
	})
	check(t, "ViT", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		v, err := nn.NewViT(g, "", nn.ViTConfig{ImageSize: 4, PatchSize: 2, Dim: 4, Heads: 2, Layers: 1, Classes: 3, Hidden: 5})
		if err != nil {
			return nil, err
		}
		return v.Forward(in[0])
	}, randn(4, 2, 16))
}

// float32 and float64 models with the same weights agree to float32
// precision, and a GPT's logits do not change when the future changes
// (causality).
func TestGPTFloat32AndCausality(t *testing.T) {
	cfg := nn.GPTConfig{BlockSize: 8, VocabSize: 13, Layers: 2, Heads: 2, Dim: 8, PyTorchInit: true, UntieWeights: true}
	run := func(dt tensor.Dtype, seq []float64) []float64 {
		g, _ := graph.New(dt, 5)
		m, err := nn.NewGPT(g, "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return forwardOutput(t, g, m.Forward, denseOf(dt, seq, 1, len(seq)))
	}
	a := run(tensor.Float64, []float64{3, 1, 4, 1, 5, 9})
	b := run(tensor.Float64, []float64{3, 1, 4, 2, 6, 5})
	f := run(tensor.Float32, []float64{3, 1, 4, 1, 5, 9})
	v := cfg.VocabSize
	for i := range a {
		if math.Abs(f[i]-a[i]) > 1e-5*math.Max(1, math.Abs(a[i])) {
			t.Fatalf("float32 logit %d = %v, float64 %v", i, f[i], a[i])
		}
		if pos := i / v; pos < 3 && a[i] != b[i] {
			t.Fatalf("logit %d (position %d) changed when only positions ≥ 3 changed", i, pos)
		}
	}
	if reflect.DeepEqual(a[3*v:], b[3*v:]) {
		t.Error("changing positions ≥ 3 changed none of their logits")
	}
}

func TestTransformerErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	gpt, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4, UntieWeights: true})
	if err != nil {
		t.Fatal(err)
	}
	long, _ := g.Input("long", 2, 5)
	x, _ := g.Input("x", 2, 3, 4)
	badMask, _ := g.Input("mask", 2, 4)
	vit, err := nn.NewViT(g, "", nn.ViTConfig{ImageSize: 28, PatchSize: 7, Dim: 4, Heads: 2, Layers: 1, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	images, _ := g.Input("images", 2, 27*27)
	errOf := func(_ any, err error) error { return err }
	for _, c := range []struct {
		err  error
		want string
	}{
		{errOf(nn.NewMultiHeadAttention(g, "a", nn.MultiHeadAttentionConfig{Dim: 10, Heads: 4})), `nn.MultiHeadAttention "a": Dim = 10, Heads = 4, want Heads > 0 dividing Dim`},
		{errOf(nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 3, Dim: 4})), "3 heads do not divide Dim = 4"},
		{errOf(gpt.Forward(long)), "sequence length 5 is longer than the position table (BlockSize = 4)"},
		{errOf(gpt.Blocks[0].ForwardPadded(x, badMask)), "padding mask \"mask\" has shape (2, 4), want (2, 3)"},
		{errOf(vit.Forward(images)), "images have shape (2, 729), want (batch, 784) (28×28 pixels)"},
		{errOf(nn.NewViT(g, "", nn.ViTConfig{ImageSize: 28, PatchSize: 5, Dim: 4, Heads: 2, Layers: 1, Classes: 10})), "PatchSize = 5 does not divide ImageSize = 28"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}

	// A token id out of range is an error when the graph runs.
	g2, _ := graph.New(tensor.Float64, 1)
	m2, _ := nn.NewGPT(g2, "", nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4, UntieWeights: true})
	ids, _ := g2.Input("ids", 1, 3)
	logits, err := m2.Forward(ids)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := g2.Compile(nil, graph.Keep(logits))
	if err != nil {
		t.Fatal(err)
	}
	mc.Set(ids, tensor.New(tensor.WithShape(1, 3), tensor.WithBacking([]float64{1, 7, 2})))
	if err := mc.Run(); err == nil || !strings.Contains(err.Error(), "index 1 is 7, want an integer in [0, 5)") {
		t.Errorf("id 7 of a vocabulary of 5: got %v", err)
	}

	// Checkpoints of another shape or with other names do not load.
	dir := t.TempDir()
	path := filepath.Join(dir, "gpt.safetensors")
	if err := train.SaveWeights(path, m2); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]nn.GPTConfig{
		"wider":  {BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 6, UntieWeights: true},
		"deeper": {BlockSize: 4, VocabSize: 5, Layers: 2, Heads: 2, Dim: 4, UntieWeights: true},
		"tied":   {BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4},
	} {
		g3, _ := graph.New(tensor.Float64, 1)
		m3, err := nn.NewGPT(g3, "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Past the model_args check, to the names and shapes.
		err = train.LoadWeights(path, m3, train.AllowArgsMismatch())
		if err == nil {
			t.Errorf("%s model loaded a checkpoint of another model", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// Attention dropout inside a GPT: the training loss depends on the step
// (new masks), repeats for a repeated step, and evaluation is deterministic.
func TestGPTDropoutSteps(t *testing.T) {
	cfg := nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4, Dropout: 0.3, UntieWeights: true}
	g, mc := gptTrainer(t, tensor.Float64, 1, cfg, 2, 4, []float64{0, 1, 2, 3, 4, 3, 2, 1}, []float64{1, 2, 3, 4, 3, 2, 1, 0})
	at := func(step int, training bool) float64 {
		g.SetStep(step)
		g.SetTraining(training)
		if err := mc.Run(); err != nil {
			t.Fatal(err)
		}
		l, _ := mc.Loss()
		return l
	}
	a, b, a2, e1, e2 := at(1, true), at(2, true), at(1, true), at(1, false), at(2, false)
	if a != a2 || a == b || e1 != e2 || e1 == a {
		t.Errorf("losses: step 1 %v and %v, step 2 %v, eval %v and %v", a, a2, b, e1, e2)
	}
}
