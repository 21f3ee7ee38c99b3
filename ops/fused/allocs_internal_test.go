package fused

// The ops of a training step allocate nothing once their buffers exist
// (issue 14): no tensor.Dense.Data boxing, no closure per parallel loop.

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/ops/parallel"
)

func TestOpsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool (parallel.For's jobs) drop items at random")
	}
	// 8 rows run on the caller's goroutine; 2·MinGrain/d rows on two cores
	// when GOMAXPROCS allows.
	const d = 64
	bf16 := bf16Autocast(t)
	for _, rows := range []int{8, 2 * parallel.MinGrain / d} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			r := rng.New(uint64(rows), "allocs")
			rand := func(shape ...int) *tensor.Dense {
				v, err := graph.NewTensor(dt, graph.Normal(0, 1), r, shape...)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			x, g, gamma, beta, w := rand(rows, d), rand(rows, d), rand(d), rand(d), rand(d, d)
			stats, err := newLayerNormStats(1e-5).Do(x)
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name string
				op   G.Op
				in   []G.Value
			}{
				{"layernorm.stats", newLayerNormStats(1e-5), []G.Value{x}},
				{"layernorm", newLayerNorm(1e-5, 2), []G.Value{x, stats, gamma, beta}},
				{"layernorm.dx", newLayerNormGrad(2, false), []G.Value{x, stats, g, gamma}},
				{"layernorm.dγ", newLayerNormGrad(2, true), []G.Value{x, stats, g}},
				{"add", newBinary(add, 2), []G.Value{x, g}},
				{"mul", newBinary(mul, 2), []G.Value{x, g}},
				{"matmul+bias", newMatMul(false, true, true, false), []G.Value{x, w, beta}},
				{"matmul+bias bf16", &matMulOp{}, []G.Value{x, w, beta}}, // below
				{"sumrows", newSumRows(), []G.Value{g}},
			}
			// Attention over 2 sequences of rows/2 tokens, 2 heads of
			// width 8 (qkv is rows × 48), with a dropout mask.
			geo := attentionGeometry{batch: 2, heads: 2, t: rows / 2, d: 16, causal: true}
			qkv, dout := rand(rows, 48), rand(rows, 16)
			probs, err := newAttentionProbs(geo, false, nil).Do(qkv)
			if err != nil {
				t.Fatal(err)
			}
			mask, err := newMask("attention-dropout", 0.2, 1, "a", &fixedMode{training: true}, 2, geo.probsShape()).Do(qkv)
			if err != nil {
				t.Fatal(err)
			}
			xmask, err := newMask("dropout", 0.2, 1, "d", &fixedMode{training: true}, 2, x.Shape()).Do(x)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, []struct {
				name string
				op   G.Op
				in   []G.Value
			}{
				{"attention.probs", newAttentionProbs(geo, false, nil), []G.Value{qkv}},
				{"attention", newAttentionOut(geo, 0.2, false, nil), []G.Value{qkv, probs, mask}},
				{"attention.dqkv", newAttentionOut(geo, 0.2, true, nil), []G.Value{qkv, probs, mask, dout}},
				// The same under bfloat16 autocast.
				{"attention.probs bf16", newAttentionProbs(geo, false, bf16), []G.Value{qkv}},
				{"attention bf16", newAttentionOut(geo, 0.2, false, bf16), []G.Value{qkv, probs, mask}},
				{"attention.dqkv bf16", newAttentionOut(geo, 0.2, true, bf16), []G.Value{qkv, probs, mask, dout}},
				{"dropout", newDropout(0.2, 2), []G.Value{x, xmask}},
			}...)
			for i := range cases {
				if cases[i].name == "matmul+bias bf16" {
					op := newMatMul(false, true, true, false)
					op.cast = bf16
					cases[i].op = op
				}
			}
			for _, c := range cases {
				products := strings.HasPrefix(c.name, "matmul") || strings.HasPrefix(c.name, "attention")
				if products && strings.HasPrefix(gemm.Name(), "gonum") {
					// gonum's GEMM (arm64 and other CPUs without the own
					// kernels) starts goroutines for large products, in
					// matmul and in attention's products alike.
					t.Logf("%s: not checked with %s, which allocates itself", c.name, gemm.Name())
					continue
				}
				if _, err := c.op.Do(c.in...); err != nil { // allocates the output buffer
					t.Fatalf("%s %v: %v", c.name, dt, err)
				}
				if n := testing.AllocsPerRun(10, func() { c.op.Do(c.in...) }); n != 0 {
					t.Errorf("%s, %v, %d rows: %v allocations per run, want 0", c.name, dt, rows, n)
				}
			}
		}
	}
}

// bf16Autocast returns the autocast setting of a float32 graph set to
// bfloat16, for ops built without one.
func bf16Autocast(t *testing.T) *graph.Autocast {
	t.Helper()
	g, err := graph.New(tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetAutocast(graph.BFloat16); err != nil {
		t.Fatal(err)
	}
	x, err := g.Input("x", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return graph.AutocastOf(x)
}

// fixedMode is a Mode with a fixed training flag and step.
type fixedMode struct {
	training bool
	step     int
}

func (m *fixedMode) Training() bool { return m.training }
func (m *fixedMode) Step() int      { return m.step }
