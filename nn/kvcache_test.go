package nn_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// kvVariants are the GPT shapes the cache must reproduce: every MLP kind
// (plain activations with and without a parameter, every gate), tied and
// untied heads, biases or none, pre- and post-LN, a custom width and ε.
var kvVariants = []struct {
	name string
	cfg  nn.GPTConfig
}{
	{"gelu", nn.GPTConfig{UntieWeights: true}},
	{"relu-tied", nn.GPTConfig{Activation: activation.ReLU}},
	{"gelu_tanh-nobias", nn.GPTConfig{Activation: activation.GELUTanh, NoBias: true, UntieWeights: true}},
	{"silu-hidden", nn.GPTConfig{Activation: activation.SiLU, Hidden: 10, UntieWeights: true}},
	{"elu", nn.GPTConfig{Activation: activation.ELUAlpha(0.7), UntieWeights: true}},
	{"sigmoid-gated", nn.GPTConfig{Activation: activation.SigmoidGated(1.5), Eps: 1e-3, UntieWeights: true}},
	{"glu", nn.GPTConfig{Gate: nn.GLU, UntieWeights: true}},
	{"geglu-tied", nn.GPTConfig{Gate: nn.GEGLU}},
	{"geglu_tanh-nobias", nn.GPTConfig{Gate: nn.GEGLUTanh, NoBias: true, UntieWeights: true}},
	{"swiglu", nn.GPTConfig{Gate: nn.SwiGLU, UntieWeights: true}},
	{"reglu", nn.GPTConfig{Gate: nn.ReGLU, UntieWeights: true}},
	{"softplus-glu", nn.GPTConfig{Gate: nn.GateOf(activation.Softplus), UntieWeights: true}},
	{"postln", nn.GPTConfig{PostLN: true, UntieWeights: true}},
	{"postln-swiglu-tied", nn.GPTConfig{PostLN: true, Gate: nn.SwiGLU}},
}

// kvModel is a GPT with every parameter drawn from N(0, 0.5²) (LayerNorm
// weights from 1 + N(0, 0.5²)), so that no bias is zero, no γ is one, and
// the logits are of order 1 to 10, not the 0.02-scale of a fresh model.
func kvModel(t testing.TB, dt tensor.Dtype, cfg nn.GPTConfig, seed uint64) (*graph.Graph, *nn.GPT) {
	cfg.BlockSize, cfg.VocabSize, cfg.Layers, cfg.Heads, cfg.Dim = 6, 7, 2, 2, 8
	g, err := graph.New(dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewGPT(g, "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(seed, "kv weights")
	for _, p := range g.ParamTensors() {
		shift := 0.0
		if strings.Contains(p.Name, "ln_") && strings.HasSuffix(p.Name, ".weight") {
			shift = 1
		}
		switch d := p.Value.Data().(type) {
		case []float64:
			for i := range d {
				d[i] = shift + 0.5*r.Normal()
			}
		case []float32:
			for i := range d {
				d[i] = float32(shift + 0.5*r.Normal())
			}
		}
	}
	return g, m
}

// fullLogits runs the training graph's Forward over one window (at most
// BlockSize ids) and returns the logits of its last position: what the
// cache must return for that window.
type fullLogits func(window []int) []float64

func graphForward(t testing.TB, g *graph.Graph, m *nn.GPT) fullLogits {
	t.Helper()
	bs, v := m.Config.BlockSize, m.Config.VocabSize
	machines := map[int]func([]int) []float64{}
	return func(window []int) []float64 {
		run, ok := machines[len(window)]
		if !ok {
			ids, err := g.Input(fmt.Sprintf("ids%d", len(window)), 1, len(window))
			if err != nil {
				t.Fatal(err)
			}
			logits, err := m.Forward(ids)
			if err != nil {
				t.Fatal(err)
			}
			mc, err := g.Compile(nil, graph.Keep(logits))
			if err != nil {
				t.Fatal(err)
			}
			run = func(w []int) []float64 {
				x := make([]float64, len(w))
				for i, id := range w {
					x[i] = float64(id)
				}
				if err := mc.Set(ids, denseOf(g.Dtype(), x, 1, len(w))); err != nil {
					t.Fatal(err)
				}
				if err := mc.Run(); err != nil {
					t.Fatal(err)
				}
				val, err := mc.Value(logits)
				if err != nil {
					t.Fatal(err)
				}
				all := graph.Float64s(val.(*tensor.Dense))
				return all[(len(w)-1)*v : len(w)*v]
			}
			machines[len(window)] = run
		}
		if len(window) > bs {
			t.Fatalf("window of %d > BlockSize %d", len(window), bs)
		}
		return run(window)
	}
}

// kvSequence is a token sequence of length n from seed.
func kvSequence(n, vocab int, seed uint64) []int {
	r := rng.New(seed, "kv tokens")
	s := make([]int, n)
	for i := range s {
		s[i] = r.IntN(vocab)
	}
	return s
}

// In float64 the cached logits equal the graph's at every position: while
// the context grows (one new position per call), and after the window
// slides (each call then runs the whole window again), to 1e-12 relative.
// The two paths do the same operations except that the graph's matrix
// products have BlockSize rows where the cache's have one, so GEMM may sum
// in another order: a few ulp per product.
func TestKVCacheMatchesForwardFloat64(t *testing.T) {
	for i, v := range kvVariants {
		t.Run(v.name, func(t *testing.T) {
			g, m := kvModel(t, tensor.Float64, v.cfg, uint64(10+i))
			full := graphForward(t, g, m)
			c, err := m.NewKVCache()
			if err != nil {
				t.Fatal(err)
			}
			bs := m.Config.BlockSize
			seq := kvSequence(3*bs+2, m.Config.VocabSize, uint64(i))
			for n := 1; n <= len(seq); n++ {
				got, err := c.Next(seq[:n])
				if err != nil {
					t.Fatal(err)
				}
				want := full(seq[max(0, n-bs):n])
				if e := relErr(got, want); !(e <= 1e-12) {
					t.Fatalf("context of %d tokens: relative error %.3g, want ≤ 1e-12\ncache %v\ngraph %v", n, e, got, want)
				}
				if wantLen := min(n, bs); c.Len() != wantLen {
					t.Fatalf("context of %d tokens: %d positions cached, want %d", n, c.Len(), wantLen)
				}
			}
		})
	}
}

// relErr is max|got − want| / max(1, max|want|).
func relErr(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	e, s := 0.0, 1.0
	for j := range want {
		e = max(e, math.Abs(got[j]-want[j]))
		s = max(s, math.Abs(want[j]))
	}
	return e / s
}

// In float32 the two paths round differently (GEMM over BlockSize rows or
// one, in whatever order the BLAS chooses), so they are compared with the
// truth instead: the float64 model with the same (float32) weights. The
// cache must be as accurate as the graph: its largest error over the
// vocabulary, relative to the logits' scale, within 2× the graph's at the
// same position or within 32 float32 ulp (32·2⁻²³ ≈ 3.8e-6) of the scale,
// whichever is larger. The model here, like a trained one, amplifies
// rounding errors through 2 blocks of LayerNorms, products of width 8 to
// 32 and softmaxes; the graph path's own error is measured, not assumed.
func TestKVCacheMatchesForwardFloat32(t *testing.T) {
	worst := 0.0
	for i, v := range kvVariants {
		t.Run(v.name, func(t *testing.T) {
			g64, m64 := kvModel(t, tensor.Float64, v.cfg, uint64(10+i))
			g32, m32 := kvModel(t, tensor.Float32, v.cfg, uint64(10+i))
			p64, p32 := g64.ParamTensors(), g32.ParamTensors()
			for j := range p64 { // the float64 model gets the float32 weights exactly
				d64, d32 := p64[j].Value.Float64s(), p32[j].Value.Float32s()
				for k := range d64 {
					d64[k] = float64(d32[k])
				}
			}
			ref, full := graphForward(t, g64, m64), graphForward(t, g32, m32)
			c, err := m32.NewKVCache()
			if err != nil {
				t.Fatal(err)
			}
			bs := m32.Config.BlockSize
			seq := kvSequence(3*bs+2, m32.Config.VocabSize, uint64(i))
			for n := 1; n <= len(seq); n++ {
				window := seq[max(0, n-bs):n]
				got, err := c.Next(seq[:n])
				if err != nil {
					t.Fatal(err)
				}
				want := ref(window)
				eCache, eGraph := relErr(got, want), relErr(full(window), want)
				worst = max(worst, eCache/max(eGraph, 0x1p-23))
				if bound := max(2*eGraph, 32*0x1p-23); !(eCache <= bound) {
					t.Fatalf("context of %d tokens: cache error %.3g (graph %.3g), want ≤ %.3g", n, eCache, eGraph, bound)
				}
			}
		})
	}
	t.Logf("largest cache error / max(graph error, 2⁻²³): %.2f", worst)
}

// The same seed gives the same tokens with and without the cache, while the
// context grows and after the window slides (BlockSize 6, 2 + 20 tokens),
// for greedy decoding, temperature and top-k. Tested in float64, where
// the logits agree to about 1e-15: a token can differ only if the sampler's
// uniform draw falls that close to a boundary between two tokens'
// cumulative probabilities. In float32 the logits may differ in the last
// bits (GEMM over one row or BlockSize), so equal tokens there are likely
// but not guaranteed.
func TestKVCacheGenerateSameTokens(t *testing.T) {
	for _, i := range []int{0, 9, 13} { // gelu, swiglu, post-LN SwiGLU tied
		v := kvVariants[i]
		_, m := kvModel(t, tensor.Float64, v.cfg, uint64(10+i))
		for _, sc := range []nn.SampleConfig{{Temperature: 0, Seed: 1}, {Temperature: 1, Seed: 2}, {Temperature: 0.7, TopK: 3, Seed: 3}} {
			var out [2][]int
			for j, newNext := range []func() (func([]int) ([]float64, error), error){m.NextToken, m.NextTokenUncached} {
				next, err := newNext()
				if err != nil {
					t.Fatal(err)
				}
				s, err := nn.NewSampler(sc)
				if err != nil {
					t.Fatal(err)
				}
				if out[j], err = nn.Generate(next, []int{3, 1}, 20, s); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(out[0], out[1]) {
				t.Errorf("%s, %+v: cached %v, uncached %v", v.name, sc, out[0], out[1])
			}
			if sc.Temperature > 0 && len(slices.Compact(slices.Clone(out[0][2:]))) < 5 {
				t.Errorf("%s, %+v: %v is too repetitive to test sampling", v.name, sc, out[0])
			}
		}
	}
}

// The cache starts again from the whole window when the context is not the
// previous one extended, when parameters are marked changed, and after
// Reset; asking for the same context twice gives the same logits
// in a new slice.
func TestKVCacheStartsAgain(t *testing.T) {
	g, m := kvModel(t, tensor.Float64, nn.GPTConfig{Gate: nn.SwiGLU, UntieWeights: true}, 5)
	full := graphForward(t, g, m)
	c, err := m.NewKVCache()
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, ctx []int, cached int) {
		t.Helper()
		got, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(got, full(ctx)); !(e <= 1e-12) {
			t.Fatalf("%s: relative error %.3g, want ≤ 1e-12", what, e)
		}
		if c.Len() != cached {
			t.Fatalf("%s: %d positions cached, want %d", what, c.Len(), cached)
		}
	}
	a, b := []int{1, 2, 3, 4, 5}, []int{1, 2, 6, 0}
	check("first context", a[:3], 3)
	check("a branch", b, 4)
	check("a shorter context", a[:2], 2)
	check("extended by three", a, 5)
	first, _ := c.Next(a)
	first[0] = math.NaN()
	check("the same context again", a, 5)

	ln, _ := g.Lookup("transformer.h.0.ln_1.bias") // the cached keys and values depend on it
	ln.Value().(*tensor.Dense).Float64s()[3] += 0.25
	graph.MarkParamsChanged()
	check("extended after ln_1 changed", append(a[:5:5], 6), 6)

	w, _ := g.Lookup("transformer.h.0.attn.c_attn.weight")
	w.Value().(*tensor.Dense).Float64s()[7] -= 0.5
	c.Reset()
	if c.Len() != 0 {
		t.Fatalf("%d positions cached after Reset", c.Len())
	}
	check("after a weight edit and Reset", a[:4], 4)
}

// Bad input gives an error naming what was expected, never a panic, and
// the cache works again afterwards.
func TestKVCacheErrors(t *testing.T) {
	var nilModel *nn.GPT
	if _, err := nilModel.NewKVCache(); err == nil {
		t.Error("a nil GPT gave a cache")
	}
	if _, err := nilModel.NextToken(); err == nil {
		t.Error("a nil GPT gave NextToken")
	}
	if _, err := nilModel.NextTokenUncached(); err == nil {
		t.Error("a nil GPT gave NextTokenUncached")
	}
	if _, err := new(nn.GPT).NextToken(); err == nil {
		t.Error("a zero GPT gave NextToken")
	}
	var nilCache *nn.KVCache
	if _, err := nilCache.Next([]int{1}); err == nil {
		t.Error("a nil cache returned logits")
	}

	g, m := kvModel(t, tensor.Float64, nn.GPTConfig{UntieWeights: true}, 6)
	full := graphForward(t, g, m)
	next, err := m.NextToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ctx  []int
		want string
	}{
		{nil, "empty context"},
		{[]int{1, 7}, "token 1 is 7, want an id in [0, 7)"},
		{[]int{1, -1, 2}, "token 1 is -1, want an id in [0, 7)"},
		{[]int{9, 1, 2, 3, 4, 5, 6, 0, 8}, "token 8 is 8"}, // the window is the last 6
	} {
		if _, err := next(tc.ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("context %v: error %v, want one saying %q", tc.ctx, err, tc.want)
		}
	}
	// Token 9 is outside the vocabulary but also outside the window (as
	// NextTokenUncached, only the window is looked at).
	ctx := []int{9, 1, 2, 3, 4, 5, 6}
	got, err := next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got, full(ctx[1:])); !(e <= 1e-12) {
		t.Errorf("after the errors: relative error %.3g from the graph, want ≤ 1e-12", e)
	}
	s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 1})
	if _, err := nn.Generate(next, nil, 3, s); err == nil || !strings.Contains(err.Error(), "empty context") {
		t.Errorf("Generate from an empty prompt: %v, want an empty-context error", err)
	}
}

// The cache sees weights that change without any LayerNorm parameter or
// bias changing: untrained GPTs (γ = 1, β = 0, biases 0, nanoGPT's init)
// differ only in their weight matrices, and after train.LoadWeights of
// another one, Next returns the loaded model's logits for the context it
// has cached; so it does after an optimizer step. Both write through
// graph.MarkParamsChanged.
func TestKVCacheSeesLoadedWeightsAndOptimizerSteps(t *testing.T) {
	cfg := nn.GPTConfig{BlockSize: 6, VocabSize: 7, Layers: 2, Heads: 2, Dim: 8}
	build := func(seed uint64) (*graph.Graph, *nn.GPT) {
		g, _ := graph.New(tensor.Float64, seed)
		m, err := nn.NewGPT(g, "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return g, m
	}
	ga, a := build(1)
	gb, b := build(2)
	ctx := []int{1, 2, 3, 4}
	next, err := a.NextToken()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := next(ctx)
	want := graphForward(t, gb, b)(ctx)
	if e := relErr(before, want); !(e > 1e-3) {
		t.Fatalf("the two models' logits differ by %.3g only: the test cannot tell them apart", e)
	}
	path := filepath.Join(t.TempDir(), "b.safetensors")
	if err := train.SaveWeights(path, b); err != nil {
		t.Fatal(err)
	}
	if err := train.LoadWeights(path, a); err != nil {
		t.Fatal(err)
	}
	got, _ := next(ctx)
	if e := relErr(got, want); !(e <= 1e-12) {
		t.Errorf("after LoadWeights: relative error %.3g from the loaded model's logits, want ≤ 1e-12", e)
	}

	ids, _ := ga.Input("train.ids", 1, 4)
	targets, _ := ga.Input("train.targets", 1, 4)
	_, loss, err := a.Loss(ids, targets)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := ga.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	mc.Set(ids, denseOf(tensor.Float64, []float64{1, 2, 3, 4}, 1, 4))
	mc.Set(targets, denseOf(tensor.Float64, []float64{2, 3, 4, 5}, 1, 4))
	if err := mc.Run(); err != nil {
		t.Fatal(err)
	}
	grads, _ := mc.Grads()
	params, err := nn.ParamTensors(a)
	if err != nil {
		t.Fatal(err)
	}
	next(ctx) // cached before the step
	if err := optim.NewAdamW(0.05).Step(params, grads); err != nil {
		t.Fatal(err)
	}
	got, _ = next(ctx)
	if e := relErr(got, graphForward(t, ga, a)(ctx)); !(e <= 1e-12) {
		t.Errorf("after an optimizer step: relative error %.3g from the model's logits, want ≤ 1e-12", e)
	}
}
