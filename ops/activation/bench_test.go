package activation_test

// Throughput of every activation's forward and backward kernel on 4M
// elements (the size of a 1024×4096 activation), reported as Melem/s:
//
//	go test ./ops/activation -run '^$' -bench . -benchtime 10x
//
// These measure; they never assert a speed.

import (
	"fmt"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
)

const benchN = 4 << 20

func benchData[T graph.Float](n int) (x, g, dst []T) {
	r := rng.New(1, "bench")
	x, g, dst = make([]T, n), make([]T, n), make([]T, n)
	for i := range x {
		x[i] = T(3 * r.Normal())
		g[i] = T(r.Normal())
	}
	return x, g, dst
}

func BenchmarkActivations(b *testing.B) {
	x32, g32, d32 := benchData[float32](benchN)
	x64, g64, d64 := benchData[float64](benchN)
	for _, act := range activation.All() {
		for _, pass := range []string{"forward", "backward"} {
			b.Run(fmt.Sprintf("%s/%s/float32", act, pass), func(b *testing.B) {
				run(b, func() error {
					if pass == "forward" {
						return activation.Forward(act, d32, x32)
					}
					return activation.Backward(act, d32, x32, g32)
				})
			})
			b.Run(fmt.Sprintf("%s/%s/float64", act, pass), func(b *testing.B) {
				run(b, func() error {
					if pass == "forward" {
						return activation.Forward(act, d64, x64)
					}
					return activation.Backward(act, d64, x64, g64)
				})
			})
		}
	}
}

func run(b *testing.B, kernel func() error) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := kernel(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchN)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melem/s")
}
