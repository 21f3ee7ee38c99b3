package activation_test

// Forward, backward and forward+backward throughput of the GELU kernels on
// the workloads of testdata/bench_torch_activations.py (4M elements,
// x ~ N(0, 3²), g ~ N(0, 1)), for a side-by-side comparison with PyTorch:
//
//	go test ./ops/activation -run '^$' -bench GELUForwardBackward -benchtime 20x
//	/usr/bin/python3 ops/activation/testdata/bench_torch_activations.py   # PyTorch as installed
//
// "fwd+bwd" runs Forward then Backward, so its Melem/s is
// 4M / (t_forward + t_backward). Every kernel path this CPU has runs
// (package simd: generic, avx2, exact32, avx512), and "copy" is the memory
// bound of the same traffic on the same cores: forward copies x to dst,
// backward writes x·g to dx. These measure; they never assert a speed.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/parallel"
	"github.com/geluproject/gelu/ops/simd"
)

func BenchmarkGELUForwardBackward(b *testing.B) {
	b.Run("copy/float32", benchCopy[float32])
	b.Run("copy/float64", benchCopy[float64])
	for _, p := range simd.Paths() {
		b.Run(p.String(), func(b *testing.B) {
			defer simd.Use(simd.Use(p))
			b.Logf("kernels: %s", activation.KernelsName())
			for _, act := range []activation.Activation{activation.GELU, activation.GELUTanh} {
				b.Run(act.String()+"/float32", func(b *testing.B) { benchFwdBwd[float32](b, act) })
				b.Run(act.String()+"/float64", func(b *testing.B) { benchFwdBwd[float64](b, act) })
			}
		})
	}
}

func benchFwdBwd[T graph.Float](b *testing.B, act activation.Activation) {
	x, g, dst := benchData[T](benchN)
	dx := make([]T, benchN)
	benchPair(b, func() error { return activation.Forward(act, dst, x) },
		func() error { return activation.Backward(act, dx, x, g) })
}

func benchPair(b *testing.B, fwd, bwd func() error) {
	b.Run("forward", func(b *testing.B) { run(b, fwd) })
	b.Run("backward", func(b *testing.B) { run(b, bwd) })
	b.Run("fwd+bwd", func(b *testing.B) {
		run(b, func() error {
			if err := fwd(); err != nil {
				return err
			}
			return bwd()
		})
	})
}

// benchCopy moves the bytes Forward and Backward move, split across the
// cores as they are, with no arithmetic to speak of.
func benchCopy[T graph.Float](b *testing.B) {
	x, g, dst := benchData[T](benchN)
	dx := make([]T, benchN)
	benchPair(b, func() error {
		parallel.Elements(len(x), func(lo, hi int) { copy(dst[lo:hi], x[lo:hi]) })
		return nil
	}, func() error {
		parallel.Elements(len(x), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dx[i] = x[i] * g[i]
			}
		})
		return nil
	})
}
