package bench

import (
	"testing"

	"gorgonia.org/tensor"
)

// BenchmarkMLPStep times the main job's training step (the workload
// mlp/fixed and mlp/shuffled10240 of examples/benchmark) without the
// child processes and PyTorch, with its allocations:
//
//	GELU_BLAS=own GOMAXPROCS=1 go test ./train/bench -run '^$' -bench MLPStep -benchmem
func BenchmarkMLPStep(b *testing.B) {
	for _, args := range []string{"fixed", "shuffled10240"} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			b.Run(args+"/"+dt.String(), func(b *testing.B) {
				step, steps, err := MLP(args, dt)
				if err != nil {
					b.Fatal(err)
				}
				if err := step(); err != nil { // warm-up: buffers, workers
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := step(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N*steps), "ms/step")
			})
		}
	}
}
