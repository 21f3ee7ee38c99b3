package nn_test

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
)

// A character-level GPT (nanoGPT's shakespeare_char shape, smaller) and one
// AdamW step, in as many lines as PyTorch:
//
//	model = GPT(GPTConfig(block_size=64, vocab_size=65, n_layer=4, n_head=4, n_embd=128))
//	logits, loss = model(idx, targets)
//	loss.backward(); clip_grad_norm_(model.parameters(), 1.0); opt.step()
//
// Parameters: wte 65·128 + wpe 64·128 + 4 blocks × (2 LayerNorms 4·128,
// c_attn 128·384 + 384, c_proj 128·128 + 128, c_fc 128·512 + 512, c_proj
// 512·128 + 128) + ln_f 2·128 = 809,856 (lm_head shares wte). At
// initialization the logits are small (standard deviation about
// 0.02·√128 ≈ 0.23), so the loss is near ln 65 + 0.23²/2 ≈ 4.2.
func ExampleGPT() {
	g, _ := graph.New(tensor.Float32, 1)
	model, _ := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 64, VocabSize: 65, Layers: 4, Heads: 4, Dim: 128})
	idx, _ := g.Input("idx", 8, 64) // batch 8, T = 64
	targets, _ := g.Input("targets", 8, 64)
	logits, loss, _ := model.Loss(idx, targets)
	m, _ := g.Compile(loss)
	opt := optim.NewAdamW(1e-3)

	r := rng.New(1, "example batch")
	ids, _ := graph.NewTensor(tensor.Float32, graph.Zeros(), r, 8, 64)
	next, _ := graph.NewTensor(tensor.Float32, graph.Zeros(), r, 8, 64)
	for i := range ids.Float32s() {
		ids.Float32s()[i], next.Float32s()[i] = float32(r.IntN(65)), float32(r.IntN(65))
	}
	m.Set(idx, ids)
	m.Set(targets, next)
	if err := m.Run(); err != nil { // forward and backward
		fmt.Println(err)
		return
	}
	grads, _ := m.Grads()
	optim.ClipGradNorm(grads, 1)
	opt.Step(g.ParamTensors(), grads)

	n := 0
	for _, p := range g.ParamTensors() {
		n += p.Value.Len()
	}
	l, _ := m.Loss()
	fmt.Println(n, "parameters; logits", logits.Shape())
	fmt.Printf("loss %.1f, ln 65 = %.1f\n", l, math.Log(65))
	// Output:
	// 809856 parameters; logits (512, 65)
	// loss 4.2, ln 65 = 4.2
}
