package nn_test

// A GPT training step (forward, backward, gradient clipping, AdamW) at
// 4 blocks, d = 256, 8 heads, T = 128, batch 16, float32, byte-level
// vocabulary (256):
//
//	go test ./nn -run '^$' -bench GPTTrainStep -benchmem -benchtime 5x

import (
	"testing"

	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

func BenchmarkGPTTrainStep(b *testing.B) {
	const batch, T = 16, 128
	cfg := nn.GPTConfig{BlockSize: T, VocabSize: 256, Layers: 4, Heads: 8, Dim: 256}
	r := rng.New(1, "bench ids")
	x, y := make([]float64, batch*T), make([]float64, batch*T)
	for i := range x {
		x[i], y[i] = float64(r.IntN(cfg.VocabSize)), float64(r.IntN(cfg.VocabSize))
	}
	g, mc := gptTrainer(b, tensor.Float32, 1, cfg, batch, T, x, y)
	opt := optim.NewAdamW(3e-4)
	params := g.ParamTensors()
	step := func() error {
		if err := mc.Run(); err != nil {
			return err
		}
		grads, err := mc.Grads()
		if err != nil {
			return err
		}
		if _, err := optim.ClipGradNorm(grads, 1); err != nil {
			return err
		}
		return opt.Step(params, grads)
	}
	if err := step(); err != nil { // allocate buffers and optimizer state
		b.Fatal(err)
	}
	timeSteps(b, step)
	b.ReportMetric(float64(b.N*batch*T)/b.Elapsed().Seconds(), "tokens/s")
}
