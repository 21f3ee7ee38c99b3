package fused_test

// Tests of the fused layer ops (Linear/MatMul, LayerNorm, losses, Add,
// Dropout, Embedding). Forward values are compared with plain float64 loops
// written here; gradients with finite differences (graph.CheckGrad); the
// LispMachine (DoDiff) with the tape machine; float32 with the float64
// reference at float32 tolerance.

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/internal/optest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func layerCases() []layerCase {
	x := randn(1, 5, 4)
	w := randn(2, 3, 4)
	b := randn(3, 3)
	logits := randn(4, 6, 5)
	return []layerCase{
		{
			name: "Linear", inputs: []*tensor.Dense{x, w, b},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Linear(in[0], in[1], in[2]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 5*3)
				for i := 0; i < 5; i++ {
					for o := 0; o < 3; o++ {
						s := in[2][o]
						for k := 0; k < 4; k++ {
							s += in[0][i*4+k] * in[1][o*4+k]
						}
						out[i*3+o] = s
					}
				}
				return out
			},
		},
		{
			name: "LinearNoBias", inputs: []*tensor.Dense{x, w},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Linear(in[0], in[1], nil) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 5*3)
				for i := 0; i < 5; i++ {
					for o := 0; o < 3; o++ {
						for k := 0; k < 4; k++ {
							out[i*3+o] += in[0][i*4+k] * in[1][o*4+k]
						}
					}
				}
				return out
			},
		},
		{
			name: "MatMulTT", inputs: []*tensor.Dense{randn(5, 4, 5), randn(6, 3, 4)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.MatMul(in[0], in[1], true, true) },
			ref: func(in [][]float64) []float64 { // Aᵀ (5×4) · Bᵀ (4×3)
				out := make([]float64, 5*3)
				for i := 0; i < 5; i++ {
					for j := 0; j < 3; j++ {
						for k := 0; k < 4; k++ {
							out[i*3+j] += in[0][k*5+i] * in[1][j*4+k]
						}
					}
				}
				return out
			},
		},
		{
			name: "LayerNorm", inputs: []*tensor.Dense{randn(7, 4, 6), randn(8, 6), randn(9, 6)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.LayerNorm(in[0], in[1], in[2], 1e-5) },
			ref:   func(in [][]float64) []float64 { return refLayerNorm(in[0], in[1], in[2], 6, 1e-5) },
		},
		{
			name: "LayerNormNoBias", inputs: []*tensor.Dense{randn(19, 4, 6), randn(20, 6)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.LayerNorm(in[0], in[1], nil, 1e-5) },
			ref:   func(in [][]float64) []float64 { return refLayerNorm(in[0], in[1], make([]float64, 6), 6, 1e-5) },
		},
		{
			name: "LayerNormNoAffine", inputs: []*tensor.Dense{randn(10, 3, 5)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.LayerNorm(in[0], nil, nil, 1e-3) },
			ref:   func(in [][]float64) []float64 { return refLayerNorm(in[0], nil, nil, 5, 1e-3) },
		},
		{
			name: "MSELoss", inputs: []*tensor.Dense{randn(11, 4, 3), randn(12, 4, 3)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.MSELoss(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				var s float64
				for i := range in[0] {
					s += (in[0][i] - in[1][i]) * (in[0][i] - in[1][i])
				}
				return []float64{s / float64(len(in[0]))}
			},
		},
		{
			name: "CrossEntropy", inputs: []*tensor.Dense{logits, labelsTensor(0, 4, 2, 2, 1, 3)}, noGrad: map[int]bool{1: true},
			build: func(in []*G.Node) (*G.Node, error) { return fused.CrossEntropy(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				var s float64
				for r := 0; r < 6; r++ {
					row := in[0][r*5 : (r+1)*5]
					var z float64
					for _, v := range row {
						z += math.Exp(v)
					}
					s -= math.Log(math.Exp(row[int(in[1][r])]) / z)
				}
				return []float64{s / 6}
			},
		},
		{
			name: "BCEWithLogits", inputs: []*tensor.Dense{randn(13, 3, 4), sigmoidOf(randn(14, 3, 4))},
			build: func(in []*G.Node) (*G.Node, error) { return fused.BCEWithLogits(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				var s float64
				for i, z := range in[0] {
					p := 1 / (1 + math.Exp(-z))
					s -= in[1][i]*math.Log(p) + (1-in[1][i])*math.Log(1-p)
				}
				return []float64{s / float64(len(in[0]))}
			},
		},
		{
			name: "Add", inputs: []*tensor.Dense{randn(15, 2, 5), randn(16, 2, 5)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Add(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, len(in[0]))
				for i := range out {
					out[i] = in[0][i] + in[1][i]
				}
				return out
			},
		},
		{
			name: "Embedding", inputs: []*tensor.Dense{tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{0, 3, 3, 1, 2, 0})), randn(17, 4, 5)}, noGrad: map[int]bool{0: true},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Embedding(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				var out []float64
				for _, i := range in[0] {
					out = append(out, in[1][int(i)*5:(int(i)+1)*5]...)
				}
				return out
			},
		},
		{
			name: "SumRows", inputs: []*tensor.Dense{randn(18, 4, 3)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.SumRows(in[0]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 3)
				for i, v := range in[0] {
					out[i%3] += v
				}
				return out
			},
		},
	}
}

func sigmoidOf(t *tensor.Dense) *tensor.Dense {
	for i, v := range t.Float64s() {
		t.Float64s()[i] = 1 / (1 + math.Exp(-v))
	}
	return t
}

func refLayerNorm(x, gamma, beta []float64, d int, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/d; r++ {
		row := x[r*d : (r+1)*d]
		var mu, v float64
		for _, a := range row {
			mu += a / float64(d)
		}
		for _, a := range row {
			v += (a - mu) * (a - mu) / float64(d)
		}
		for j, a := range row {
			y := (a - mu) / math.Sqrt(v+eps)
			if gamma != nil {
				y = y*gamma[j] + beta[j]
			}
			out[r*d+j] = y
		}
	}
	return out
}

func TestLayerOpsForward(t *testing.T) { checkForward(t, layerCases(), 2e-6) }

// Labels and indices are not differentiable: they are held fixed.
func TestLayerOpsGradCheck(t *testing.T) {
	for _, c := range layerCases() {
		checkWithConstants(t, c)
	}
}

func TestLayerOpsDoDiffMatchesTape(t *testing.T) { checkDoDiffMatchesTape(t, layerCases()) }

// Linear, MatMul, SumRows, Add and Embedding have differentiable backward ops.
func TestLayerOpsGradGradCheck(t *testing.T) {
	for _, c := range layerCases() {
		switch c.name {
		case "Linear", "LinearNoBias", "MatMulTT", "SumRows", "Add":
		default:
			continue
		}
		res, err := graph.CheckGradGrad(func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			y, err := c.build(in)
			if err != nil {
				return nil, err
			}
			return activation.GELU.Apply(y) // a nonlinearity so that H·v is not zero
		}, c.inputs, graph.GradCheck{Seed: 4, RTol: 1e-6, ATol: 1e-8})
		if err != nil || !res.OK {
			t.Errorf("%s: %v %v", c.name, res, err)
		}
	}
}

func TestLayerOpsBuildErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 4, 3)
	w, _ := g.Input("w", 2, 5)
	b, _ := g.Input("b", 7)
	v, _ := g.Input("v", 3)
	g32, _ := graph.New(tensor.Float32, 1)
	x32, _ := g32.Input("x32", 4, 3)
	_ = x32
	cases := []struct {
		err  error
		want string
	}{
		{second(fused.Linear(x, w, nil)), "input \"x\" has 3 features, weight \"w\" expects 5"},
		{second(fused.Linear(v, w, nil)), "want a matrix"},
		{second(fused.Linear(x, mustInput(g, "w2", 2, 3), b)), "bias \"b\" has shape (7), want (2)"},
		{second(fused.LayerNorm(x, nil, v, 1e-5)), "beta without gamma"},
		{second(fused.LayerNorm(x, b, b, 1e-5)), "gamma \"b\" has shape (7), want (3)"},
		{second(fused.LayerNorm(x, nil, nil, -1)), "eps = -1"},
		{second(fused.CrossEntropy(x, x)), "want (rows × classes) and (rows)"},
		{second(fused.MSELoss(x, v)), "has shape"},
		{second(fused.Dropout(x, 1, 1, "d", g)), "p = 1"},
		{second(fused.Add(x, v)), "has shape"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", c.err, c.want)
		}
	}
}

func second(_ *G.Node, err error) error { return err }

func mustInput(g *graph.Graph, name string, shape ...int) *G.Node {
	n, err := g.Input(name, shape...)
	if err != nil {
		panic(err)
	}
	return n
}

// Labels and indices are checked when the graph runs, naming the position.
func TestLayerOpsRunErrors(t *testing.T) {
	crossEntropy := func(g *graph.Graph) (*G.Node, []*G.Node) {
		z, y := mustInput(g, "z", 2, 3), mustInput(g, "y", 2)
		l, _ := fused.CrossEntropy(z, y)
		return l, []*G.Node{z, y}
	}
	for _, c := range []struct {
		build func(g *graph.Graph) (*G.Node, []*G.Node)
		data  []*tensor.Dense
		want  string
	}{
		{
			build: crossEntropy,
			data:  []*tensor.Dense{randn(1, 2, 3), labelsTensor(1, 3)},
			want:  "label of row 1 is 3, want an integer class in [0, 3)",
		},
		{
			build: crossEntropy,
			data:  []*tensor.Dense{randn(1, 2, 3), labelsTensor(0.5, 1)},
			want:  "label of row 0 is 0.5",
		},
		{
			build: func(g *graph.Graph) (*G.Node, []*G.Node) {
				i, tb := mustInput(g, "i", 1, 2), mustInput(g, "t", 3, 2)
				e, _ := fused.Embedding(i, tb)
				s, _ := G.Sum(e)
				return s, []*G.Node{i, tb}
			},
			data: []*tensor.Dense{tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, -1})), randn(2, 3, 2)},
			want: "index 1 is -1, want an integer in [0, 3)",
		},
	} {
		g, _ := graph.New(tensor.Float64, 1)
		out, ins := c.build(g)
		m, err := g.Compile(out, graph.WithRespectTo())
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range ins {
			m.Set(n, c.data[i])
		}
		if err := m.Run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a run error containing %q", err, c.want)
		}
	}
}

func TestDropoutMasks(t *testing.T) {
	const n = 20000
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 1, n)
	y, err := fused.Dropout(x, 0.3, 9, "drop", g)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(y))
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	m.Set(x, tensor.New(tensor.WithShape(1, n), tensor.WithBacking(ones)))
	run := func(step int) []float64 {
		g.SetStep(step)
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Value(y)
		return append([]float64(nil), optest.Floats(t, v)...)
	}
	a, b, a2 := run(1), run(2), run(1)
	kept, differ := 0, 0
	for i := range a {
		if a[i] != a2[i] {
			t.Fatalf("step 1 gave different masks on two runs at %d", i)
		}
		if a[i] != b[i] {
			differ++
		}
		switch a[i] {
		case 0:
		case 1 / 0.7:
			kept++
		default:
			t.Fatalf("element %d = %v, want 0 or 1/0.7", i, a[i])
		}
	}
	// Binomial(n, 0.7): sd = √(n·0.21) ≈ 65.
	if math.Abs(float64(kept)-0.7*n) > 5*65 || differ == 0 {
		t.Errorf("kept %d of %d (want ≈ %v); steps 1 and 2 differ at %d positions", kept, n, 0.7*n, differ)
	}
	g.SetTraining(false)
	for i, v := range run(3) {
		if v != 1 {
			t.Fatalf("eval mode changed element %d to %v", i, v)
		}
	}
}

// Dropout's backward uses the forward mask: check it against finite
// differences with the step (and so the mask) held fixed.
func TestDropoutGradCheck(t *testing.T) {
	res, err := graph.CheckGrad(func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		g.SetStep(5)
		return fused.Dropout(in[0], 0.5, 3, "d", g)
	}, []*tensor.Dense{randn(3, 4, 6)}, graph.GradCheck{Seed: 1})
	if err != nil || !res.OK {
		t.Errorf("%v %v", res, err)
	}
}
