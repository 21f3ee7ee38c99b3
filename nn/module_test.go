package nn_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// moduleCases build every layer and model of the package alone on a
// fresh graph, under the name given.
var moduleCases = []struct {
	name  string
	build func(g *graph.Graph, name string) (nn.Module, error)
}{
	{"Linear", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewLinear(g, n, 3, 2) }},
	{"Linear-nobias", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewLinear(g, n, 3, 2, nn.NoBias()) }},
	{"LayerNorm", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewLayerNorm(g, n, 4) }},
	{"LayerNorm-nobias", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewLayerNorm(g, n, 4, nn.NoBias()) }},
	{"Embedding", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewEmbedding(g, n, 5, 3) }},
	{"Dropout", func(g *graph.Graph, n string) (nn.Module, error) { return nn.NewDropout(g, n, 0.1) }},
	{"MLP", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewMLP(g, n, nn.MLPConfig{In: 3, Hidden: []int{4, 4}, Out: 2})
	}},
	{"FeedForward", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewFeedForward(g, n, nn.FeedForwardConfig{Dim: 4})
	}},
	{"MLPBlock-gated", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewMLPBlock(g, n, nn.MLPBlockConfig{Dim: 4, Gate: nn.SwiGLU})
	}},
	{"MultiHeadAttention", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewMultiHeadAttention(g, n, nn.MultiHeadAttentionConfig{Dim: 4, Heads: 2})
	}},
	{"Block-nobias", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewBlock(g, n, nn.BlockConfig{Dim: 4, Heads: 2, NoBias: true})
	}},
	{"GPT-tied", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewGPT(g, n, nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 2, Heads: 2, Dim: 4})
	}},
	{"GPT-untied", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewGPT(g, n, nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 2, Heads: 2, Dim: 4, UntieWeights: true})
	}},
	{"ViT", func(g *graph.Graph, n string) (nn.Module, error) {
		return nn.NewViT(g, n, nn.ViTConfig{ImageSize: 4, PatchSize: 2, Dim: 4, Heads: 2, Layers: 1, Classes: 3})
	}},
}

// A module built alone on a graph owns exactly the graph's parameters, in
// the graph's creation order; built under a prefix, it has the same state
// dict names as at the root, and its graph names are the prefix joined to
// them.
func TestModulesOwnTheirParameters(t *testing.T) {
	for _, c := range moduleCases {
		t.Run(c.name, func(t *testing.T) {
			names := map[string][]string{}
			for _, prefix := range []string{"", "teacher", "a.b"} {
				g, _ := graph.New(tensor.Float32, 1)
				m, err := c.build(g, prefix)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := m.Parameters(), g.Params(); !slices.Equal(got, want) {
					t.Fatalf("prefix %q: Parameters() = %v, the graph has %v", prefix, nodeNames(got), nodeNames(want))
				}
				sd, err := nn.NamedParameters(m)
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range g.ParamTensors() {
					want := p.Name
					if prefix != "" {
						want = strings.TrimPrefix(p.Name, prefix+".")
						if want == p.Name {
							t.Errorf("prefix %q: graph parameter %q is outside the prefix", prefix, p.Name)
						}
					}
					if sd[i].Name != want || sd[i].Value != p.Value {
						t.Errorf("prefix %q: entry %d is %q, want %q (the graph's tensor)", prefix, i, sd[i].Name, want)
					}
				}
				for _, e := range sd {
					names[prefix] = append(names[prefix], e.Name)
				}
			}
			if !reflect.DeepEqual(names[""], names["teacher"]) || !reflect.DeepEqual(names[""], names["a.b"]) {
				t.Errorf("state dict names depend on the prefix: %v", names)
			}
		})
	}
}

func nodeNames(ns []*G.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name()
	}
	return out
}

// Two GPTs of the same configuration share a graph under different names,
// train separately (different initial weights: the names seed them), and a
// Sequential lists a weight shared by two of its layers once.
func TestTwoGPTsInOneGraph(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	cfg := nn.GPTConfig{BlockSize: 4, VocabSize: 5, Layers: 1, Heads: 2, Dim: 4}
	a, err := nn.NewGPT(g, "teacher", cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nn.NewGPT(g, "student", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nn.NewGPT(g, "student", cfg); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("a third GPT under a used name: %v, want a name-already-used error", err)
	}
	if got := len(a.Parameters()) + len(b.Parameters()); got != len(g.Params()) {
		t.Errorf("%d parameters in the two models, %d in the graph", got, len(g.Params()))
	}
	if a.WTE.Name() != "teacher.transformer.wte.weight" || b.WTE.Name() != "student.transformer.wte.weight" {
		t.Errorf("token tables named %q and %q", a.WTE.Name(), b.WTE.Name())
	}
	if slices.Equal(graph.Float64s(a.WTE.Value().(*tensor.Dense)), graph.Float64s(b.WTE.Value().(*tensor.Dense))) {
		t.Error("the two models start from the same weights")
	}
	ids, _ := g.Input("ids", 2, 4)
	la, err := a.Forward(ids)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Forward(ids)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := g.Compile(nil, graph.Keep(la, lb))
	if err != nil {
		t.Fatal(err)
	}
	mc.Set(ids, denseOf(tensor.Float64, []float64{0, 1, 2, 3, 4, 3, 2, 1}, 2, 4))
	if err := mc.Run(); err != nil {
		t.Fatal(err)
	}

	// Generation and recomputation work under a prefix: the cache, the
	// uncached graph and a recomputed copy give the same logits.
	cached, _ := b.NextToken()
	uncached, _ := b.NextTokenUncached()
	c1, err1 := cached([]int{3, 1, 4})
	c2, err2 := uncached([]int{3, 1, 4})
	if err1 != nil || err2 != nil || relErr(c1, c2) > 1e-12 {
		t.Errorf("student's NextToken and NextTokenUncached: %v, %v, relative difference %.3g", err1, err2, relErr(c1, c2))
	}
	rcfg := cfg
	rcfg.Recompute = true
	gr, _ := graph.New(tensor.Float64, 1)
	nn.NewGPT(gr, "teacher", cfg)
	br, err := nn.NewGPT(gr, "student", rcfg)
	if err != nil {
		t.Fatal(err)
	}
	ids2, _ := gr.Input("ids", 2, 4)
	lr, err := br.Forward(ids2)
	if err != nil {
		t.Fatal(err)
	}
	va, _ := mc.Value(lb)
	got := graphtestOutput(t, gr, ids2, lr, denseOf(tensor.Float64, []float64{0, 1, 2, 3, 4, 3, 2, 1}, 2, 4))
	if !slices.Equal(got, graph.Float64s(va.(*tensor.Dense))) {
		t.Error("a recomputed student under a prefix gives other logits than the plain one")
	}

	lin, _ := nn.NewLinear(g, "shared", 4, 4)
	seq := nn.Sequential{lin, nn.Act(activation.ReLU), lin}
	if got := seq.Parameters(); len(got) != 2 || got[0] != lin.Weight || got[1] != lin.Bias {
		t.Errorf("Sequential with a layer used twice: parameters %v", nodeNames(got))
	}
}

// A Block and a MultiHeadAttention take a batch of sequences (batch, T,
// Dim): each sequence is attended on its own, so a batch of two gives what
// the two sequences give alone (float64; products over different row
// counts may round differently, so to 1e-13 relative).
func TestBlockTakesBatchesOfSequences(t *testing.T) {
	const T, d = 3, 4
	xv := randn(21, 2, T, d)
	for _, causal := range []bool{true, false} {
		run := func(x *tensor.Dense, attnOnly bool) []float64 {
			g, _ := graph.New(tensor.Float64, 4)
			var f func(*G.Node) (*G.Node, error)
			if attnOnly {
				a, err := nn.NewMultiHeadAttention(g, "attn", nn.MultiHeadAttentionConfig{Dim: d, Heads: 2, Causal: causal})
				if err != nil {
					t.Fatal(err)
				}
				f = a.Forward
			} else {
				b, err := nn.NewBlock(g, "h.0", nn.BlockConfig{Dim: d, Heads: 2, Causal: causal})
				if err != nil {
					t.Fatal(err)
				}
				f = b.Forward
			}
			return forwardOutput(t, g, f, x)
		}
		for _, attnOnly := range []bool{false, true} {
			both := run(xv, attnOnly)
			if len(both) != 2*T*d {
				t.Fatalf("output has %d values, want %d (batch, T, Dim)", len(both), 2*T*d)
			}
			for s := range 2 {
				alone := run(tensor.New(tensor.WithShape(1, T, d), tensor.WithBacking(slices.Clone(xv.Float64s()[s*T*d:(s+1)*T*d]))), attnOnly)
				if e := relErr(both[s*T*d:(s+1)*T*d], alone); !(e <= 1e-13) {
					t.Errorf("causal %v, attention only %v: sequence %d in a batch differs from alone by %.3g", causal, attnOnly, s, e)
				}
			}
		}
	}
	g, _ := graph.New(tensor.Float64, 4)
	b, _ := nn.NewBlock(g, "h.0", nn.BlockConfig{Dim: d, Heads: 2})
	flat, _ := g.Input("flat", 2*T, d)
	if _, err := b.Forward(flat); err == nil || !strings.Contains(err.Error(), "want (batch, T, 4); one sequence is (1, T, 4)") {
		t.Errorf("a (rows, Dim) input: %v, want an error asking for (batch, T, Dim)", err)
	}
}

// Forward on the zero value or a nil pointer of every layer returns an
// error naming the constructor, never panics; the zero Dropout and the
// zero Sequential are the identity.
func TestZeroValuesAreErrorsOrIdentity(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2, 4)
	x3, _ := g.Input("x3", 1, 2, 4)
	for _, m := range []nn.Module{
		&nn.Linear{}, (*nn.Linear)(nil), &nn.LayerNorm{Dim: 4, Weight: x}, (*nn.LayerNorm)(nil), &nn.Embedding{}, (*nn.Embedding)(nil),
		&nn.MLP{}, (*nn.MLP)(nil), &nn.FeedForward{}, (*nn.FeedForward)(nil), &nn.MLPBlock{}, (*nn.MLPBlock)(nil),
		&nn.MultiHeadAttention{}, (*nn.MultiHeadAttention)(nil), &nn.Block{}, (*nn.Block)(nil),
		&nn.GPT{}, (*nn.GPT)(nil), &nn.ViT{}, (*nn.ViT)(nil), &nn.Dropout{P: 0.5}, &nn.Dropout{P: 2},
		nn.Sequential{nil},
	} {
		for _, in := range []*G.Node{x, x3} {
			var y *G.Node
			err := noPanic(func() (err error) { y, err = m.Forward(in); return err })
			if err == nil || strings.Contains(err.Error(), "PANIC") {
				t.Errorf("%#v.Forward: %v, %v; want an error", m, y, err)
			}
		}
		if err := noPanic(func() error { m.Parameters(); return nil }); err != nil {
			t.Errorf("%#v.Parameters: %v", m, err)
		}
	}
	for _, m := range []nn.Module{&nn.Dropout{}, (*nn.Dropout)(nil), nn.Sequential{}} {
		if y, err := m.Forward(x); err != nil || y != x {
			t.Errorf("%#v.Forward(x) = %v, %v; want x itself", m, y, err)
		}
	}
}

func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}

// The layers' options are one type; an option a layer does not take is an
// error naming it. Eps(0) is 1e-5, as a config's Eps 0 is. NoBias on a
// LayerNorm gives y = γ·x̂ (float64 loops as the reference), with no bias
// parameter.
func TestOptions(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(nn.NewLinear(g, "l", 2, 2, nn.Eps(1e-6))), `nn.Linear "l": option Eps does not apply to a Linear`},
		{second(nn.NewEmbedding(g, "e", 2, 2, nn.NoBias(), nn.NoAffine())), `nn.Embedding "e": option NoBias, NoAffine does not apply`},
		{second(nn.NewLayerNorm(g, "n", 2, nn.BiasInit(graph.Zeros()))), `nn.LayerNorm "n": option BiasInit does not apply`},
		{second(nn.NewLayerNorm(g, "n", 2, nil)), `nn.LayerNorm "n": option 0 is nil`},
		{second(nn.NewLayerNorm(g, "n", 2, nn.Eps(-1))), `eps = -1, want a finite ε > 0 (0 means 1e-5)`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
	if len(g.Params()) != 0 {
		t.Errorf("refused layers left parameters %v", nodeNames(g.Params()))
	}

	xv := randn(5, 3, 6)
	out := func(opts ...nn.Option) ([]float64, *nn.LayerNorm, *graph.Graph) {
		g, _ := graph.New(tensor.Float64, 1)
		ln, err := nn.NewLayerNorm(g, "ln", 6, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range g.ParamTensors() { // γ away from 1, β away from 0
			for i := range p.Value.Float64s() {
				p.Value.Float64s()[i] = 0.5 + float64(i)
			}
		}
		return forwardOutput(t, g, ln.Forward, xv), ln, g
	}
	zero, ln0, _ := out(nn.Eps(0))
	def, _, _ := out(nn.Eps(1e-5))
	if ln0.Eps != 1e-5 || !slices.Equal(zero, def) {
		t.Errorf("Eps(0) gave ε = %v and other outputs than Eps(1e-5)", ln0.Eps)
	}
	got, ln, g2 := out(nn.NoBias())
	if ln.Bias != nil || len(g2.Params()) != 1 {
		t.Fatalf("LayerNorm with NoBias has parameters %v", nodeNames(g2.Params()))
	}
	x := xv.Float64s()
	for r := range 3 {
		row := x[r*6 : (r+1)*6]
		var mu, v float64
		for _, a := range row {
			mu += a / 6
		}
		for _, a := range row {
			v += (a - mu) * (a - mu) / 6
		}
		for j, a := range row {
			want := (a - mu) / math.Sqrt(v+1e-5) * (0.5 + float64(j))
			if math.Abs(got[r*6+j]-want) > 1e-14 {
				t.Errorf("row %d, %d: γ·x̂ = %v, want %v", r, j, got[r*6+j], want)
			}
		}
	}
	check(t, "LayerNorm no bias", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		ln, err := nn.NewLayerNorm(g, "ln", 5, nn.NoBias())
		if err != nil {
			return nil, err
		}
		return ln.Forward(in[0])
	}, randn(5, 3, 5))
}
