package fused_test

// Softmax, BatchedMatMul, ScaledDotProductAttention, Mul, Gather, Reshape
// and PrependRow: forward values against float64 loops written here (both
// dtypes), gradients against finite differences, LispMachine against the
// tape, double backward where it is implemented and a clear error where it
// is not.

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

// refSoftmax is the textbook softmax of each row of n, with −Inf giving 0.
func refSoftmax(x []float64, n int) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/n; r++ {
		row := x[r*n : (r+1)*n]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - m)
		}
		for j, v := range row {
			out[r*n+j] = math.Exp(v-m) / s
		}
	}
	return out
}

// refBMM multiplies batch pairs of row-major matrices element by element.
func refBMM(a, b []float64, batch, ar, ac, br, bc int, tA, tB bool) []float64 {
	at := func(x []float64, cols, i, j int, tr bool) float64 {
		if tr {
			i, j = j, i
		}
		return x[i*cols+j]
	}
	m, k := ar, ac
	if tA {
		m, k = ac, ar
	}
	n := bc
	if tB {
		n = br
	}
	out := make([]float64, batch*m*n)
	for p := 0; p < batch; p++ {
		pa, pb := a[p*ar*ac:], b[p*br*bc:]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for l := 0; l < k; l++ {
					s += at(pa, ac, i, l, tA) * at(pb, bc, l, j, tB)
				}
				out[p*m*n+i*n+j] = s
			}
		}
	}
	return out
}

// refAttention is multi-head attention written out loop by loop, from the
// definition: for each (b, h), scores q·k/√d_h, masked, softmaxed, times v.
func refAttention(qkv, pad []float64, batch, t, d, heads int, causal bool) []float64 {
	dh := d / heads
	out := make([]float64, batch*t*d)
	for b := 0; b < batch; b++ {
		for h := 0; h < heads; h++ {
			col := func(part, tok, j int) float64 { return qkv[(b*t+tok)*3*d+part*d+h*dh+j] }
			for i := 0; i < t; i++ {
				s := make([]float64, t)
				for j := range s {
					if (causal && j > i) || (pad != nil && pad[b*t+j] == 0) {
						s[j] = math.Inf(-1)
						continue
					}
					for l := 0; l < dh; l++ {
						s[j] += col(0, i, l) * col(1, j, l)
					}
					s[j] /= math.Sqrt(float64(dh))
				}
				p := refSoftmax(s, t)
				for l := 0; l < dh; l++ {
					var o float64
					for j := range p {
						if p[j] != 0 {
							o += p[j] * col(2, j, l)
						}
					}
					out[(b*t+i)*d+h*dh+l] = o
				}
			}
		}
	}
	return out
}

// padMask (2 sequences of 4): the second has two padding positions.
func padMask() *tensor.Dense {
	return tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{1, 1, 1, 1, 1, 1, 0, 0}))
}

func transformerCases() []layerCase {
	qkv := randn(41, 8, 12) // batch 2, T 4, d 4
	return []layerCase{
		{
			name: "Softmax", inputs: []*tensor.Dense{randn(31, 3, 2, 5)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Softmax(in[0]) },
			ref:   func(in [][]float64) []float64 { return refSoftmax(in[0], 5) },
		},
		{
			name: "BatchedMatMul", inputs: []*tensor.Dense{randn(32, 2, 3, 4), randn(33, 2, 4, 5)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.BatchedMatMul(in[0], in[1], false, false) },
			ref:   func(in [][]float64) []float64 { return refBMM(in[0], in[1], 2, 3, 4, 4, 5, false, false) },
		},
		{
			name: "BatchedMatMulTT", inputs: []*tensor.Dense{randn(34, 3, 4, 2), randn(35, 3, 5, 4)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.BatchedMatMul(in[0], in[1], true, true) },
			ref:   func(in [][]float64) []float64 { return refBMM(in[0], in[1], 3, 4, 2, 5, 4, true, true) },
		},
		{
			name: "BatchedMatMulNT", inputs: []*tensor.Dense{randn(36, 2, 3, 4), randn(37, 2, 5, 4)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.BatchedMatMul(in[0], in[1], false, true) },
			ref:   func(in [][]float64) []float64 { return refBMM(in[0], in[1], 2, 3, 4, 5, 4, false, true) },
		},
		{
			name: "Attention", inputs: []*tensor.Dense{qkv},
			build: func(in []*G.Node) (*G.Node, error) {
				return fused.ScaledDotProductAttention(in[0], nil, fused.AttentionConfig{Batch: 2, Heads: 2})
			},
			ref: func(in [][]float64) []float64 { return refAttention(in[0], nil, 2, 4, 4, 2, false) },
		},
		{
			name: "AttentionCausalPadded", inputs: []*tensor.Dense{qkv, padMask()}, noGrad: map[int]bool{1: true},
			build: func(in []*G.Node) (*G.Node, error) {
				return fused.ScaledDotProductAttention(in[0], in[1], fused.AttentionConfig{Batch: 2, Heads: 2, Causal: true})
			},
			ref: func(in [][]float64) []float64 { return refAttention(in[0], in[1], 2, 4, 4, 2, true) },
		},
		{
			name: "AttentionOneHead", inputs: []*tensor.Dense{randn(42, 6, 9)},
			build: func(in []*G.Node) (*G.Node, error) {
				return fused.ScaledDotProductAttention(in[0], nil, fused.AttentionConfig{Batch: 1, Heads: 1, Causal: true})
			},
			ref: func(in [][]float64) []float64 { return refAttention(in[0], nil, 1, 6, 3, 1, true) },
		},
		{
			name: "Mul", inputs: []*tensor.Dense{randn(43, 3, 4), randn(44, 3, 4)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Mul(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, len(in[0]))
				for i := range out {
					out[i] = in[0][i] * in[1][i]
				}
				return out
			},
		},
		{
			name: "Sigmoid", inputs: []*tensor.Dense{randn(49, 3, 4)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Sigmoid(in[0]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, len(in[0]))
				for i, v := range in[0] {
					out[i] = 1 / (1 + math.Exp(-v))
				}
				return out
			},
		},
		{
			name: "Gather", inputs: []*tensor.Dense{randn(45, 2, 3)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Gather(in[0], []int{5, 0, 0, 3, 1, 5, 2, 2}, 4, 2) },
			ref: func(in [][]float64) []float64 {
				var out []float64
				for _, j := range []int{5, 0, 0, 3, 1, 5, 2, 2} {
					out = append(out, in[0][j])
				}
				return out
			},
		},
		{
			name: "Reshape", inputs: []*tensor.Dense{randn(46, 2, 6)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.Reshape(in[0], 4, 3) },
			ref:   func(in [][]float64) []float64 { return in[0] },
		},
		{
			name: "PrependRow", inputs: []*tensor.Dense{randn(47, 4, 3), randn(48, 3)},
			build: func(in []*G.Node) (*G.Node, error) { return fused.PrependRow(in[0], in[1], 2) },
			ref: func(in [][]float64) []float64 {
				x, r := in[0], in[1]
				var out []float64
				out = append(out, r...)
				out = append(out, x[:6]...)
				out = append(out, r...)
				return append(out, x[6:]...)
			},
		},
	}
}

func TestTransformerOpsForward(t *testing.T) { checkForward(t, transformerCases(), 3e-6) }

func TestTransformerOpsGradCheck(t *testing.T) {
	for _, c := range transformerCases() {
		checkWithConstants(t, c)
	}
}

// Batched products, Mul, Gather and PrependRow have differentiable backward
// ops; Softmax, Sigmoid and attention report that theirs are not.
func TestTransformerOpsGradGrad(t *testing.T) {
	for _, c := range transformerCases() {
		build := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
			y, err := c.build(in)
			if err != nil {
				return nil, err
			}
			return activation.GELU.Apply(y) // a nonlinearity so that H·v is not zero
		}
		switch {
		case strings.HasPrefix(c.name, "Softmax"), strings.HasPrefix(c.name, "Attention"), c.name == "Sigmoid":
			if len(c.noGrad) > 0 {
				continue
			}
			_, err := graph.CheckGradGrad(build, c.inputs, graph.GradCheck{Seed: 4})
			if err == nil || !strings.Contains(err.Error(), "double backward through") {
				t.Errorf("%s: double backward gave %v, want a 'not implemented' error", c.name, err)
			}
		default:
			res, err := graph.CheckGradGrad(build, c.inputs, graph.GradCheck{Seed: 4, RTol: 1e-6, ATol: 1e-8})
			if err != nil || !res.OK {
				t.Errorf("%s: %v %v", c.name, res, err)
			}
		}
	}
}

func TestTransformerOpsDoDiffMatchesTape(t *testing.T) { checkDoDiffMatchesTape(t, transformerCases()) }

// Softmax of large logits does not overflow: softmax(x + c) = softmax(x).
func TestSoftmaxStable(t *testing.T) {
	x := randn(51, 2, 6)
	shifted := x.Clone().(*tensor.Dense)
	for i := range shifted.Float64s() {
		shifted.Float64s()[i] += 1000
	}
	c := layerCase{inputs: []*tensor.Dense{shifted}, build: func(in []*G.Node) (*G.Node, error) { return fused.Softmax(in[0]) }}
	want := refSoftmax(x.Float64s(), 6)
	for _, dt := range optest.Dtypes() {
		got := runForward(t, c, dt)
		for i := range want {
			if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-4 {
				t.Fatalf("%v: softmax(x+1000)[%d] = %v, softmax(x) = %v", dt, i, got[i], want[i])
			}
		}
	}
}

// stepMode is a Mode with a fixed training flag and step.
type stepMode struct {
	training bool
	step     int
}

func (m *stepMode) Training() bool { return m.training }
func (m *stepMode) Step() int      { return m.step }

// Attention dropout: the backward uses the forward's mask (finite
// differences with the step held fixed); masks are a function of the step;
// kept probabilities are scaled by 1/(1−p), and evaluation is the identity.
func TestAttentionDropout(t *testing.T) {
	mode := &stepMode{training: true, step: 5}
	cfg := fused.AttentionConfig{Batch: 2, Heads: 2, Causal: true, Dropout: 0.4, Seed: 3, Name: "attn", Mode: mode}
	qkv := randn(61, 8, 12)
	res, err := graph.CheckGrad(func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		return fused.ScaledDotProductAttention(in[0], nil, cfg)
	}, []*tensor.Dense{qkv}, graph.GradCheck{Seed: 1})
	if err != nil || !res.OK {
		t.Errorf("gradient with dropout: %v %v", res, err)
	}

	// With V = identity-like columns, the output rows are the dropped
	// probabilities themselves: build qkv with v of token j = e_j (d = T).
	const T = 4
	in := tensor.New(tensor.WithShape(T, 3*T), tensor.WithBacking(make([]float64, T*3*T)))
	for j := 0; j < T; j++ {
		in.Float64s()[j*3*T+2*T+j] = 1
	}
	c := layerCase{inputs: []*tensor.Dense{in}, build: func(x []*G.Node) (*G.Node, error) {
		return fused.ScaledDotProductAttention(x[0], nil, fused.AttentionConfig{Batch: 1, Heads: 1, Dropout: 0.5, Seed: 3, Name: "a", Mode: mode})
	}}
	run := func(step int, training bool) []float64 {
		mode.step, mode.training = step, training
		return runForward(t, c, tensor.Float64)
	}
	// q = k = 0, so every probability is 1/T; kept ones become 2/T.
	a, b, a2, eval := run(1, true), run(2, true), run(1, true), run(1, false)
	kept, differ := 0, 0
	for i := range a {
		if a[i] != a2[i] {
			t.Fatalf("step 1 gave different masks on two runs")
		}
		if a[i] != b[i] {
			differ++
		}
		switch a[i] {
		case 0:
		case 2.0 / T:
			kept++
		default:
			t.Fatalf("probability %d = %v, want 0 or %v", i, a[i], 2.0/T)
		}
		if eval[i] != 1.0/T {
			t.Fatalf("eval probability %d = %v, want %v", i, eval[i], 1.0/T)
		}
	}
	if kept == 0 || kept == len(a) || differ == 0 {
		t.Errorf("kept %d of %d; steps 1 and 2 differ at %d", kept, len(a), differ)
	}
}

func TestTransformerOpsBuildErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	qkv := mustInput(g, "qkv", 8, 12)
	badMask := mustInput(g, "mask", 2, 5)
	a3 := mustInput(g, "a3", 2, 3, 4)
	b3 := mustInput(g, "b3", 3, 4, 5)
	m2 := mustInput(g, "m2", 3, 4)
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: 2, Heads: 3})), "divisible by 3 heads"},
		{second(fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: 3, Heads: 2})), "want Batch·T"},
		{second(fused.ScaledDotProductAttention(qkv, badMask, fused.AttentionConfig{Batch: 2, Heads: 2})), "want (2, 4)"},
		{second(fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: 2, Heads: 2, Dropout: 0.1})), "needs a Mode"},
		{second(fused.ScaledDotProductAttention(qkv, nil, fused.AttentionConfig{Batch: 2, Heads: 2, Dropout: 1})), "want 0 ≤ p < 1"},
		{second(fused.BatchedMatMul(a3, b3, false, false)), "batch sizes differ"},
		{second(fused.BatchedMatMul(a3, m2, false, false)), "want (batch, rows, cols)"},
		{second(fused.Gather(m2, []int{0, 12}, 2)), "index 1 is 12"},
		{second(fused.Gather(m2, []int{0}, 2)), "1 indices"},
		{second(fused.Reshape(m2, 5, 2)), "fused.Reshape"},
		{second(fused.PrependRow(m2, mustInput(g, "r", 3), 2)), "multiple of groups"},
		{second(fused.Mul(m2, a3)), "fused.Mul"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
}

// The float32 backward passes agree with the float64 ones (which the
// finite-difference checks verify) to float32 precision.
func TestTransformerOpsFloat32Gradients(t *testing.T) {
	for _, c := range transformerCases() {
		want, got := gradients(t, c, tensor.Float64), gradients(t, c, tensor.Float32)
		for i := range want {
			if j := mismatch(got[i], want[i], 2e-5); j >= 0 {
				t.Errorf("%s: float32 gradient %d[%d] = %v, float64 %v", c.name, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// A NaN input makes its softmax row NaN and leaves the other rows alone.
func TestSoftmaxNaN(t *testing.T) {
	x := randn(52, 2, 4)
	x.Float64s()[1] = math.NaN()
	c := layerCase{inputs: []*tensor.Dense{x}, build: func(in []*G.Node) (*G.Node, error) { return fused.Softmax(in[0]) }}
	g, _ := graph.New(tensor.Float64, 1)
	n, _ := g.Input("x", 2, 4)
	y, _ := c.build([]*G.Node{n})
	m, err := g.Compile(nil, graph.Keep(y), graph.AllowNonFinite())
	if err != nil {
		t.Fatal(err)
	}
	m.Set(n, x)
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(y)
	got, want := optest.Floats(t, v), refSoftmax(x.Float64s()[4:], 4)
	for j := 0; j < 4; j++ {
		if !math.IsNaN(got[j]) {
			t.Errorf("row 0 (with a NaN) element %d = %v, want NaN", j, got[j])
		}
		if math.Abs(got[4+j]-want[j]) > 1e-15 {
			t.Errorf("row 1 element %d = %v, want %v", j, got[4+j], want[j])
		}
	}
}
