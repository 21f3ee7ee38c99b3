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
	params := []graph.NamedTensor{
		{Name: "fc1.weight", Value: dense(dt, []int{cols, rows}, randn("b1", rows*cols, 0.02))},
		{Name: "fc2.weight", Value: dense(dt, []int{rows, cols}, randn("b2", rows*cols, 0.02))},
	}
	grads := []*tensor.Dense{
		dense(dt, []int{cols, rows}, randn("g1", rows*cols, 1e-3)),
		dense(dt, []int{rows, cols}, randn("g2", rows*cols, 1e-3)),
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
	elems := float64(2*rows*cols) * float64(b.N)
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
