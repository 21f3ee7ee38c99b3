package optim_test

// Step throughput on two 768×3072 parameters (a transformer MLP block's
// weights, 4.7M elements), reported as ns per element and as the memory
// traffic it implies:
//
//	go test ./optim -run '^$' -bench . -benchtime 20x
//
// Bytes counted per element: SGD with momentum reads p, g, buf and writes p,
// buf; Adam reads p, g, m, v and writes p, m, v; both also read g once in
// the NaN check before the update. These measure; they never assert a speed.
//
// BenchmarkStepMLP is the same on the parameters of the GELU paper's MNIST
// MLP (784 → 8 × 128 → 10: 18 tensors, 218,058 elements), whose state fits
// in the caches. GELU_KERNELS=generic runs the portable loops instead of
// package simd's kernels, for a comparison in one binary.

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

func benchStep(b *testing.B, dt tensor.Dtype, o optim.Optimizer, touches int) {
	const rows, cols = 768, 3072
	benchShapes(b, dt, o, touches, [][]int{{cols, rows}, {rows, cols}})
}

// mlpShapes are the weights and biases of the MNIST MLP, layer by layer.
var mlpShapes = func() (s [][]int) {
	in := 784
	for _, out := range []int{128, 128, 128, 128, 128, 128, 128, 128, 10} {
		s = append(s, []int{out, in}, []int{out})
		in = out
	}
	return s
}()

func BenchmarkStepMLP(b *testing.B) {
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("SGD-momentum/float32/procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			benchShapes(b, tensor.Float32, &optim.SGD{LearningRate: 0.01, Momentum: 0.9}, 6, mlpShapes)
		})
		b.Run(fmt.Sprintf("Adam/float32/procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			benchShapes(b, tensor.Float32, optim.NewAdam(1e-3), 8, mlpShapes)
		})
	}
}

// benchShapes times Step on parameters of the given shapes.
func benchShapes(b *testing.B, dt tensor.Dtype, o optim.Optimizer, touches int, shapes [][]int) {
	var params []graph.NamedTensor
	var grads []*tensor.Dense
	total := 0
	for i, sh := range shapes {
		n := tensor.Shape(sh).TotalSize()
		total += n
		params = append(params, graph.NamedTensor{Name: fmt.Sprint("p", i), Value: dense(dt, sh, randn(fmt.Sprint("p", i), n, 0.02))})
		grads = append(grads, dense(dt, sh, randn(fmt.Sprint("g", i), n, 1e-3)))
	}
	if err := o.Step(params, grads); err != nil { // allocates the state
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := o.Step(params, grads); err != nil {
			b.Fatal(err)
		}
	}
	elems := float64(total) * float64(b.N)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec*1e9/elems, "ns/elem")
	b.ReportMetric(elems*float64(touches)*float64(dt.Size())/sec/1e9, "GB/s")
}

func BenchmarkStep(b *testing.B) {
	for _, procs := range []int{1, runtime.NumCPU()} {
		for _, dt := range dtypes {
			b.Run(fmt.Sprintf("SGD-momentum/%v/procs=%d", dt, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				benchStep(b, dt, &optim.SGD{LearningRate: 0.01, Momentum: 0.9, WeightDecay: 1e-4}, 6)
			})
			b.Run(fmt.Sprintf("Adam/%v/procs=%d", dt, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				benchStep(b, dt, optim.NewAdam(1e-3), 8)
			})
			b.Run(fmt.Sprintf("AdamW/%v/procs=%d", dt, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				benchStep(b, dt, optim.NewAdamW(1e-3), 8)
			})
		}
	}
}

func BenchmarkClipGradNorm(b *testing.B) {
	const n = 2 * 768 * 3072
	for _, dt := range dtypes {
		b.Run(dt.String(), func(b *testing.B) {
			g := []*tensor.Dense{dense(dt, []int{n}, randn("clip", n, 1))}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// +Inf only measures, so every iteration sees the same data.
				if _, err := optim.ClipGradNorm(g, math.Inf(1)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(n*b.N), "ns/elem")
		})
	}
}
