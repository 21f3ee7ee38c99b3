package activation_test

// Forward, backward and forward+backward throughput of the GELU kernels on
// the workloads of testdata/bench_torch_activations.py (4M elements,
// x ~ N(0, 3²), g ~ N(0, 1)), for a side-by-side comparison with PyTorch:
//
//	go test ./ops/activation -run '^$' -bench GELUForwardBackward -benchtime 20x
//	/usr/bin/python3 ops/testdata/bench_torch_activations.py
//
// "fwd+bwd" runs Forward then Backward, so its Melem/s is
// 4M / (t_forward + t_backward). These measure; they never assert a speed.

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
)

func BenchmarkGELUForwardBackward(b *testing.B) {
	b.Logf("kernels: %s", activation.KernelsName())
	for _, act := range []activation.Activation{activation.GELU, activation.GELUTanh} {
		b.Run(act.String()+"/float32", func(b *testing.B) { benchFwdBwd[float32](b, act) })
		b.Run(act.String()+"/float64", func(b *testing.B) { benchFwdBwd[float64](b, act) })
	}
}

func benchFwdBwd[T graph.Float](b *testing.B, act activation.Activation) {
	x, g, dst := benchData[T](benchN)
	dx := make([]T, benchN)
	b.Run("forward", func(b *testing.B) {
		run(b, func() error { return activation.Forward(act, dst, x) })
	})
	b.Run("backward", func(b *testing.B) {
		run(b, func() error { return activation.Backward(act, dx, x, g) })
	})
	b.Run("fwd+bwd", func(b *testing.B) {
		run(b, func() error {
			if err := activation.Forward(act, dst, x); err != nil {
				return err
			}
			return activation.Backward(act, dx, x, g)
		})
	})
}
