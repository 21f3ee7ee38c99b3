package nn_test

// Benchmarks of the layers and of a full training step of the pre-LN
// Transformer feed-forward block (LayerNorm → Linear → GELU → Linear +
// residual, MSE loss, SGD with momentum), at the two shapes the project is
// measured on against PyTorch:
//
//	go test ./nn -run '^$' -bench . -benchmem
//
// "act-MB" is the size of the step's activations (inputs, intermediates and
// their gradients); B/op should stay a small fraction of it.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/bench"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type ffnShape struct{ tokens, d, dff int }

var benchShapes = []ffnShape{{512, 256, 1024}, {256, 768, 3072}}

// setRandom binds seeded N(0, 1) data to the input n.
func setRandom(m *graph.Machine, n *G.Node, seed uint64) error {
	v, err := graph.NewTensor(n.Dtype(), graph.Normal(0, 1), rng.New(seed, "bench"), n.Shape()...)
	if err != nil {
		return err
	}
	return m.Set(n, v)
}

// activationBytes counts x, y, LN, FC1, GELU, FC2, residual and the
// gradients of the five intermediates: 2·(5·tokens·d + 2·tokens·dff)
// elements, roughly.
func activationBytes(dt tensor.Dtype, s ffnShape) float64 {
	return float64(2*(5*s.tokens*s.d+2*s.tokens*s.dff)) * float64(dt.Size())
}

// timeSteps times b.N calls of step, reporting allocations.
func timeSteps(b *testing.B, step func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFeedForwardStep(b *testing.B) {
	for _, s := range benchShapes {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			b.Run(fmt.Sprintf("d=%d/dff=%d/tokens=%d/%v", s.d, s.dff, s.tokens, dt), func(b *testing.B) {
				// The benchmark program's workload ffn/<tokens>x<d>x<dff>.
				step, _, err := bench.FFN(fmt.Sprintf("%dx%dx%d", s.tokens, s.d, s.dff), dt)
				if err != nil {
					b.Fatal(err)
				}
				if err := step(); err != nil { // allocate state and buffers
					b.Fatal(err)
				}
				timeSteps(b, step)
				b.ReportMetric(activationBytes(dt, s)/1e6, "act-MB")
			})
		}
	}
}

// BenchmarkFeedForwardStepOps profiles the float32 step at both shapes
// (graph.Machine.Profile): the wall time per step of each kind of op (op
// names without their arguments: "matmul·ᵀ+b", "gelu'·g", …) as
// "<kind>-ms" metrics, and the optimizer step as "sgd-ms": where a step's
// time outside its matrix products goes.
func BenchmarkFeedForwardStepOps(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(fmt.Sprintf("%dx%dx%d", s.tokens, s.d, s.dff), func(b *testing.B) {
			m, step, err := bench.FFNStep(fmt.Sprintf("%dx%dx%d", s.tokens, s.d, s.dff), tensor.Float32)
			if err != nil {
				b.Fatal(err)
			}
			if err := step(); err != nil {
				b.Fatal(err)
			}
			if err := m.Profile(true); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := step(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			ops, err := m.Profiled()
			if err != nil {
				b.Fatal(err)
			}
			kinds := map[string]float64{}
			var inGraph float64
			for _, o := range ops {
				kind, _, _ := strings.Cut(o.Op, "(")
				ms := o.Total.Seconds() * 1e3 / float64(b.N)
				kinds[strings.ReplaceAll(kind, " ", "")] += ms
				inGraph += ms
			}
			for kind, ms := range kinds {
				b.ReportMetric(ms, kind+"-ms")
			}
			// The rest of the step: the gradients handed over and SGD.
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N)-inGraph, "sgd-ms")
		})
	}
}

// BenchmarkLayers times each layer's forward and backward alone.
func BenchmarkLayers(b *testing.B) {
	s := benchShapes[0]
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		layers := map[string]func(g *graph.Graph, x *G.Node) (*G.Node, error){
			"Linear": func(g *graph.Graph, x *G.Node) (*G.Node, error) {
				l, err := nn.NewLinear(g, "fc", s.d, s.dff)
				if err != nil {
					return nil, err
				}
				return l.Forward(x)
			},
			"LayerNorm": func(g *graph.Graph, x *G.Node) (*G.Node, error) {
				l, err := nn.NewLayerNorm(g, "ln", s.d)
				if err != nil {
					return nil, err
				}
				return l.Forward(x)
			},
		}
		for _, name := range []string{"Linear", "LayerNorm"} {
			b.Run(fmt.Sprintf("%s/%v", name, dt), func(b *testing.B) {
				g, _ := graph.New(dt, 1)
				x, _ := g.Input("x", s.tokens, s.d)
				y, err := layers[name](g, x)
				if err != nil {
					b.Fatal(err)
				}
				loss, _ := G.Sum(y)
				m, err := g.Compile(loss, graph.WithRespectTo(append(g.Params(), x)...))
				if err != nil {
					b.Fatal(err)
				}
				if err := setRandom(m, x, 1); err != nil {
					b.Fatal(err)
				}
				timeSteps(b, m.Run)
			})
		}
	}
}
