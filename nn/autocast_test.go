package nn_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

// TestAutocastTrainingIsDeterministic trains a GPT large enough that its
// products and loops are split among cores under bfloat16 autocast, with
// 1, 2 and 3 threads (GOMAXPROCS and the GEMM's): every step's loss and
// every final weight are the same bits, and differ from float32's.
func TestAutocastTrainingIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a GPT four times")
	}
	cfg := nn.GPTConfig{BlockSize: 64, VocabSize: 40, Layers: 2, Heads: 4, Dim: 128}
	const batch, steps = 8, 3
	r := rng.New(4, "autocast determinism")
	ids, targets := make([]float64, batch*cfg.BlockSize), make([]float64, batch*cfg.BlockSize)
	for i := range ids {
		ids[i], targets[i] = float64(r.IntN(cfg.VocabSize)), float64(r.IntN(cfg.VocabSize))
	}
	train := func(p graph.Precision, threads int) (losses []float64, weights []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		prev := gemm.Own{}.Threads()
		defer func() { _ = gemm.Own{}.SetThreads(prev) }()
		if err := (gemm.Own{}).SetThreads(threads); err != nil {
			t.Fatal(err)
		}
		g, m := gptTrainer(t, tensor.Float32, 5, cfg, batch, cfg.BlockSize, ids, targets)
		if err := g.SetAutocast(p); err != nil {
			t.Fatal(err)
		}
		opt, params := optim.NewAdamW(1e-3), g.ParamTensors()
		for range steps {
			if err := m.Run(); err != nil {
				t.Fatal(err)
			}
			l, _ := m.Loss()
			grads, err := m.Grads()
			if err != nil {
				t.Fatal(err)
			}
			if err := opt.Step(params, grads); err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		for _, p := range params {
			weights = append(weights, p.Value.Data().([]float32)...)
		}
		return losses, weights
	}
	l1, w1 := train(graph.BFloat16, 1)
	for _, threads := range []int{2, 3} {
		l, w := train(graph.BFloat16, threads)
		for i := range l1 {
			if l[i] != l1[i] {
				t.Fatalf("%d threads: step %d loss %v, %v on one thread", threads, i, l[i], l1[i])
			}
		}
		for i := range w1 {
			if math.Float32bits(w[i]) != math.Float32bits(w1[i]) {
				t.Fatalf("%d threads: weight %d = %v, %v on one thread", threads, i, w[i], w1[i])
			}
		}
	}
	if l32, _ := train(graph.Full, 2); l32[steps-1] == l1[steps-1] {
		t.Errorf("float32 and bfloat16 training give the same loss %v: autocast had no effect", l32[steps-1])
	}
}
