package gemm

// GEMM throughput of gonum and OpenBLAS in GFLOP/s (2·m·n·k per product):
//
//	go test ./ops/gemm -run '^$' -bench GEMM -benchtime 2s
//
// 256×768×3072 is a GPT-2-small MLP layer on a 256-token batch.

import (
	"fmt"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
)

func BenchmarkGEMM(b *testing.B) {
	impls := testedBLAS(b)
	sizes := [][3]int{{64, 64, 64}, {256, 256, 256}, {256, 768, 3072}, {1024, 1024, 1024}}
	for _, impl := range impls {
		name := "gonum"
		if _, ok := impl.(*OpenBLAS); ok {
			name = "openblas"
		}
		for _, s := range sizes {
			m, k, n := s[0], s[1], s[2]
			b.Run(fmt.Sprintf("%s/%dx%dx%d/float32", name, m, k, n), func(b *testing.B) {
				benchGEMM[float32](b, impl, m, n, k)
			})
			b.Run(fmt.Sprintf("%s/%dx%dx%d/float64", name, m, k, n), func(b *testing.B) {
				benchGEMM[float64](b, impl, m, n, k)
			})
		}
	}
}

func benchGEMM[T graph.Float](b *testing.B, impl BLAS, m, n, k int) {
	r := rng.New(3, "bench-gemm")
	x, y, z := make([]T, m*k), make([]T, k*n), make([]T, m*n)
	for i := range x {
		x[i] = T(r.Normal())
	}
	for i := range y {
		y[i] = T(r.Normal())
	}
	c := gemmCase{m: m, n: n, k: k, alpha: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gemmWith(impl, c, x, k, y, n, z, n)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGEMMThenGELU alternates a GEMM with the activation of its
// output, as a layer does: OpenBLAS's worker threads keep spinning for a
// while after each call (OPENBLAS_THREAD_TIMEOUT) and can slow the Go
// kernels that follow. Compare, in separate processes:
//
//	go test ./ops/gemm -run '^$' -bench GEMMThenGELU -count 5
//	OPENBLAS_THREAD_TIMEOUT=4 go test ./ops/gemm -run '^$' -bench GEMMThenGELU -count 5
func BenchmarkGEMMThenGELU(b *testing.B) {
	const m, k, n = 256, 768, 3072
	r := rng.New(4, "bench-gemm-gelu")
	x, w, y := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range x {
		x[i] = float32(r.Normal())
	}
	for i := range w {
		w[i] = float32(r.Normal() / 30)
	}
	b.Logf("BLAS: %s", Name())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Gemm(false, false, m, n, k, 1, x, k, w, n, 0, y, n)
		activation.Forward(activation.GELU, y, y)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "layers/s")
}
