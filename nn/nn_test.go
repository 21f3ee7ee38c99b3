package nn_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func randn(seed uint64, shape ...int) *tensor.Dense {
	r := rng.New(seed, "nn")
	t := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(shape...))
	for i := range t.Float64s() {
		t.Float64s()[i] = r.Normal()
	}
	return t
}

func paramNames(g *graph.Graph) []string {
	var out []string
	for _, p := range g.ParamTensors() {
		out = append(out, fmt.Sprintf("%s%v", p.Name, p.Value.Shape()))
	}
	return out
}

func check(t *testing.T, name string, build graph.BuildFunc, inputs ...*tensor.Dense) {
	t.Helper()
	res, err := graph.CheckGrad(build, inputs, graph.GradCheck{Seed: 5, RTol: 1e-6, ATol: 1e-8})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.OK {
		t.Errorf("%s: %v", name, res)
	}
}

func TestLinearNamesInitAndGradients(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 3)
	l, err := nn.NewLinear(g, "fc1", 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paramNames(g), []string{"fc1.weight(3, 4)", "fc1.bias(3)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("params %v, want %v", got, want)
	}
	for _, p := range g.ParamTensors() {
		for _, v := range p.Value.Float64s() {
			if math.Abs(v) >= 0.5 { // U(±1/√4)
				t.Errorf("%s has %v outside (−1/√in, 1/√in)", p.Name, v)
			}
		}
	}
	x, _ := g.Input("x", 2, 5)
	if _, err := l.Forward(x); err == nil || !strings.Contains(err.Error(), `nn.Linear "fc1": input "x" has shape (2, 5), want (rows, 4)`) {
		t.Errorf("wrong feature count: got %v", err)
	}
	check(t, "Linear", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		l, err := nn.NewLinear(g, "fc", 4, 3)
		if err != nil {
			return nil, err
		}
		return l.Forward(in[0])
	}, randn(1, 5, 4))
	check(t, "Linear no bias", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		l, err := nn.NewLinear(g, "fc", 4, 3, nn.NoBias())
		if err != nil {
			return nil, err
		}
		return l.Forward(in[0])
	}, randn(1, 5, 4))
}

// composedLayerNorm is LayerNorm written with gorgonia's own broadcast ops;
// it exists only to check the fused op.
func composedLayerNorm(x, gamma, beta *G.Node, eps float64) (*G.Node, error) {
	d := float64(x.Shape()[1])
	sum, err := G.Sum(x, 1)
	if err != nil {
		return nil, err
	}
	mean, err := G.Div(sum, G.NewConstant(d))
	if err != nil {
		return nil, err
	}
	centered, err := G.BroadcastSub(x, mean, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(centered)
	if err != nil {
		return nil, err
	}
	ss, err := G.Sum(sq, 1)
	if err != nil {
		return nil, err
	}
	variance, err := G.Div(ss, G.NewConstant(d))
	if err != nil {
		return nil, err
	}
	ve, err := G.Add(variance, G.NewConstant(eps))
	if err != nil {
		return nil, err
	}
	std, err := G.Sqrt(ve)
	if err != nil {
		return nil, err
	}
	xh, err := G.BroadcastHadamardDiv(centered, std, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	scaled, err := G.BroadcastHadamardProd(xh, gamma, nil, []byte{0})
	if err != nil {
		return nil, err
	}
	return G.BroadcastAdd(scaled, beta, nil, []byte{0})
}

// The fused LayerNorm agrees with the composed one in value and gradients.
func TestLayerNormFusedMatchesComposed(t *testing.T) {
	x, gamma, beta := randn(1, 6, 5), randn(2, 5), randn(3, 5)
	run := func(useFused bool) (vals [][]float64) {
		g, _ := graph.New(tensor.Float64, 1)
		eg := g.ExprGraph()
		xn := G.NewTensor(eg, tensor.Float64, 2, G.WithShape(6, 5), G.WithName("x"), G.WithValue(x.Clone()))
		gn := G.NewTensor(eg, tensor.Float64, 1, G.WithShape(5), G.WithName("g"), G.WithValue(gamma.Clone()))
		bn := G.NewTensor(eg, tensor.Float64, 1, G.WithShape(5), G.WithName("b"), G.WithValue(beta.Clone()))
		var y *G.Node
		var err error
		if useFused {
			y, err = fused.LayerNorm(xn, gn, bn, 1e-5)
		} else {
			y, err = composedLayerNorm(xn, gn, bn, 1e-5)
		}
		if err != nil {
			t.Fatal(err)
		}
		w := G.NewTensor(eg, tensor.Float64, 2, G.WithShape(6, 5), G.WithName("w"), G.WithValue(randn(4, 6, 5)))
		p, _ := G.HadamardProd(y, w)
		loss, _ := G.Sum(p)
		grads, err := g.Grad(loss, xn, gn, bn)
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.Compile(loss, graph.WithRespectTo(), graph.Keep(append(grads, y)...))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		for _, n := range append([]*G.Node{y}, grads...) {
			v, _ := m.Value(n)
			vals = append(vals, append([]float64(nil), v.(*tensor.Dense).Float64s()...))
		}
		return vals
	}
	fused, composed := run(true), run(false)
	for k, what := range []string{"value", "dx", "dgamma", "dbeta"} {
		for i := range fused[k] {
			if math.Abs(fused[k][i]-composed[k][i]) > 1e-12*math.Max(1, math.Abs(composed[k][i])) {
				t.Errorf("%s[%d]: fused %v, composed %v", what, i, fused[k][i], composed[k][i])
			}
		}
	}
	check(t, "LayerNorm", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		ln, err := nn.NewLayerNorm(g, "ln", 5)
		if err != nil {
			return nil, err
		}
		return ln.Forward(in[0])
	}, randn(5, 3, 5))
}

func TestFeedForwardPreAndPostLNAgainstReference(t *testing.T) {
	const rows, d, dff = 3, 6, 10
	xv := randn(7, rows, d)
	for _, post := range []bool{false, true} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			g, _ := graph.New(dt, 11)
			f, err := nn.NewFeedForward(g, "blocks.0.ffn", nn.FeedForwardConfig{Dim: d, Hidden: dff, PostLN: post})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"blocks.0.ffn.ln.weight(6)", "blocks.0.ffn.ln.bias(6)", "blocks.0.ffn.fc1.weight(10, 6)",
				"blocks.0.ffn.fc1.bias(10)", "blocks.0.ffn.fc2.weight(6, 10)", "blocks.0.ffn.fc2.bias(6)"}
			if got := paramNames(g); !reflect.DeepEqual(got, want) {
				t.Fatalf("params %v, want %v", got, want)
			}
			got := forwardOutput(t, g, f.Forward, cast(xv, dt))
			ref := referenceFFN(xv.Float64s(), params64(g), rows, d, dff, post)
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-5
			}
			for i := range ref {
				if math.Abs(got[i]-ref[i]) > tol*math.Max(1, math.Abs(ref[i])) {
					t.Fatalf("postLN=%v %v: y[%d] = %v, reference %v", post, dt, i, got[i], ref[i])
				}
			}
		}
		check(t, fmt.Sprintf("FeedForward postLN=%v", post), func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			f, err := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: 4, Hidden: 7, PostLN: post, Activation: activation.GELUTanh})
			if err != nil {
				return nil, err
			}
			return f.Forward(in[0])
		}, randn(8, 3, 4))
	}
}

// referenceFFN is the block in plain float64 loops, with GELU through erfc.
func referenceFFN(x []float64, p map[string][]float64, rows, d, dff int, post bool) []float64 {
	ln := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for r := 0; r < rows; r++ {
			row := v[r*d : (r+1)*d]
			var mu, s float64
			for _, a := range row {
				mu += a / float64(d)
			}
			for _, a := range row {
				s += (a - mu) * (a - mu) / float64(d)
			}
			for j, a := range row {
				out[r*d+j] = (a-mu)/math.Sqrt(s+1e-5)*p["ln.weight"][j] + p["ln.bias"][j]
			}
		}
		return out
	}
	linear := func(v []float64, w, b []float64, in, out int) []float64 {
		y := make([]float64, rows*out)
		for r := 0; r < rows; r++ {
			for o := 0; o < out; o++ {
				s := b[o]
				for k := 0; k < in; k++ {
					s += v[r*in+k] * w[o*in+k]
				}
				y[r*out+o] = s
			}
		}
		return y
	}
	h := x
	if !post {
		h = ln(x)
	}
	h = linear(h, p["fc1.weight"], p["fc1.bias"], d, dff)
	for i, z := range h {
		h[i] = z * 0.5 * math.Erfc(-z/math.Sqrt2)
	}
	h = linear(h, p["fc2.weight"], p["fc2.bias"], dff, d)
	for i := range h {
		h[i] += x[i]
	}
	if post {
		h = ln(h)
	}
	return h
}

func params64(g *graph.Graph) map[string][]float64 {
	out := map[string][]float64{}
	for _, p := range g.ParamTensors() {
		name := p.Name[strings.LastIndex(p.Name[:strings.LastIndex(p.Name, ".")], ".")+1:]
		out[name] = graph.Float64s(p.Value)
	}
	return out
}

// cast returns a float64 tensor's values as a new tensor of dtype dt.
func cast(t *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	return denseOf(dt, t.Float64s(), t.Shape()...)
}

// BERT-base (768→3072) and GPT-2-medium (1024→4096) blocks build, run
// forward and backward, and give gradients for every parameter.
func TestFeedForwardTransformerShapes(t *testing.T) {
	for _, c := range []struct{ d, dff int }{{768, 3072}, {1024, 4096}} {
		g, _ := graph.New(tensor.Float32, 1)
		f, err := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: c.d, Hidden: c.dff, Dropout: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		x, _ := g.Input("x", 4, c.d)
		y, err := f.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		target, _ := g.Input("target", 4, c.d)
		loss, err := nn.MSELoss(y, target)
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.Compile(loss)
		if err != nil {
			t.Fatal(err)
		}
		m.Set(x, cast(randn(1, 4, c.d), tensor.Float32))
		m.Set(target, cast(randn(2, 4, c.d), tensor.Float32))
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		grads, err := m.Grads()
		if err != nil || len(grads) != 6 {
			t.Fatalf("%d grads, err %v", len(grads), err)
		}
		for i, gr := range grads {
			if !gr.Shape().Eq(m.Params()[i].Shape()) {
				t.Errorf("grad %d shape %v, param %v", i, gr.Shape(), m.Params()[i].Shape())
			}
		}
		if err := m.CheckFinite(); err != nil {
			t.Error(err)
		}
	}
}

func TestMLPNamesPreActivationsAndGradients(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{5, 3}, Out: 2, Activation: activation.ReLU,
		WeightInit: graph.UnitNormRows(), BiasInit: graph.Zeros()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mlp.layers.0.weight(5, 4)", "mlp.layers.0.bias(5)", "mlp.layers.1.weight(3, 5)",
		"mlp.layers.1.bias(3)", "mlp.layers.2.weight(2, 3)", "mlp.layers.2.bias(2)"}
	if got := paramNames(g); !reflect.DeepEqual(got, want) {
		t.Errorf("params %v, want %v", got, want)
	}
	x, _ := g.Input("x", 7, 4)
	out, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(mlp.Pre) != 2 || !mlp.Pre[0].Shape().Eq(tensor.Shape{7, 5}) || !out.Shape().Eq(tensor.Shape{7, 2}) {
		t.Errorf("pre-activations %v, output %v", mlp.Pre, out.Shape())
	}
	// A second Forward (e.g. on a test input) must not overwrite the first's nodes.
	first := mlp.Pre
	x2, _ := g.Input("x2", 3, 4)
	if _, err := mlp.Forward(x2); err != nil {
		t.Fatal(err)
	}
	if first[0].Shape()[0] != 7 || mlp.Pre[0].Shape()[0] != 3 {
		t.Errorf("second Forward changed the first's pre-activations: %v, %v", first[0].Shape(), mlp.Pre[0].Shape())
	}
	check(t, "MLP", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		m, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 3, Hidden: []int{4, 4}, Out: 2, Activation: activation.SiLU})
		if err != nil {
			return nil, err
		}
		return m.Forward(in[0])
	}, randn(3, 5, 3))
}

func TestEmbeddingGradient(t *testing.T) {
	idx := tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{0, 2, 1, 1, 3, 0}))
	check(t, "Embedding", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		e, err := nn.NewEmbedding(g, "emb", 4, 3)
		if err != nil {
			return nil, err
		}
		i := G.NewTensor(g.ExprGraph(), tensor.Float64, 2, G.WithShape(3, 2), G.WithName("idx"), G.WithValue(idx))
		y, err := e.Forward(i)
		if err != nil {
			return nil, err
		}
		return G.HadamardProd(y, in[0])
	}, randn(4, 3, 6))
}

func TestSequentialAndAct(t *testing.T) {
	check(t, "Sequential", func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		a, err := nn.NewLinear(g, "a", 3, 4)
		if err != nil {
			return nil, err
		}
		b, err := nn.NewLinear(g, "b", 4, 2)
		if err != nil {
			return nil, err
		}
		return nn.Sequential{a, nn.Act(activation.Activation{}), b}.Forward(in[0])
	}, randn(6, 2, 3))
}

func TestAccuracy(t *testing.T) {
	logits := tensor.New(tensor.WithShape(4, 3), tensor.WithBacking([]float32{
		0.1, 0.9, 0.0, // 1
		2, 2, 1, // tie: 0
		-1, -2, -0.5, // 2
		0, 0, 0, // padding row
	}))
	got, err := nn.Accuracy(logits, []int{1, 0, 1, 2}, 3)
	if err != nil || got != 2 {
		t.Errorf("Accuracy = %d, %v; want 2", got, err)
	}
	if _, err := nn.Accuracy(logits, []int{1, 0, 7}, 3); err == nil {
		t.Error("label 7 of 3 classes accepted")
	}
}

func TestConstructorErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	for _, err := range []error{
		second(nn.NewLinear(g, "l", 0, 3)),
		second(nn.NewLayerNorm(g, "ln", 0)),
		second(nn.NewFeedForward(g, "f", nn.FeedForwardConfig{Dim: 4, Hidden: -1})),
		second(nn.NewFeedForward(g, "f", nn.FeedForwardConfig{Dim: 4, Hidden: 8, Activation: activation.SigmoidGated(-1)})),
		second(nn.NewMLP(g, "m", nn.MLPConfig{In: 3, Hidden: []int{0}, Out: 2})),
		second(nn.NewDropout(g, "d", 1.5)),
		second(nn.NewEmbedding(g, "e", 3, 0)),
	} {
		if err == nil {
			t.Error("bad configuration accepted")
		}
	}
	nn.NewLinear(g, "dup", 2, 2)
	if _, err := nn.NewLinear(g, "dup", 2, 2); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("duplicate layer name: got %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
