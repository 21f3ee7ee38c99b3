package nn_test

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
)

// GPT-2 small's feed-forward block (d = 768, d_ff = 3072, pre-LN, GELU):
// its parameters under PyTorch state_dict names and layouts (a Linear's
// weight is out×in), 2·768·3072 + 3072 + 768 + 2·768 = 4,723,968 numbers.
func ExampleFeedForward() {
	g, _ := graph.New(tensor.Float32, 1)
	x, _ := g.Input("x", 256, 768) // 256 tokens
	ffn, _ := nn.NewFeedForward(g, "h.0.mlp", nn.FeedForwardConfig{Dim: 768, Hidden: 3072})
	y, _ := ffn.Forward(x) // x + fc2(gelu(fc1(ln(x))))
	n := 0
	for _, p := range g.ParamTensors() {
		fmt.Println(p.Name, p.Value.Shape())
		n += p.Value.Len()
	}
	fmt.Println(n, "parameters; output", y.Shape())
	// Output:
	// h.0.mlp.ln.weight (768)
	// h.0.mlp.ln.bias (768)
	// h.0.mlp.fc1.weight (3072, 768)
	// h.0.mlp.fc1.bias (3072)
	// h.0.mlp.fc2.weight (768, 3072)
	// h.0.mlp.fc2.bias (768)
	// 4723968 parameters; output (256, 768)
}

// The package documentation's sketch: a feed-forward block, a GPT with its
// loss, and text drawn from the GPT (untrained here; ExampleGPT_NextToken
// trains one first).
func Example() {
	g, _ := graph.New(tensor.Float32, 1)
	x, _ := g.Input("x", 256, 768)
	ffn, _ := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: 768, Hidden: 3072})
	y, _ := ffn.Forward(x) // x + fc2(gelu(fc1(ln(x))))

	gpt, _ := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 64, VocabSize: 65, Layers: 4, Heads: 4, Dim: 128})
	idx, _ := g.Input("idx", 8, 64) // token ids (batch, T)
	targets, _ := g.Input("targets", 8, 64)
	logits, loss, _ := gpt.Loss(idx, targets) // (batch·T, vocab), mean cross-entropy
	fmt.Println(y.Shape(), logits.Shape(), loss.Shape())

	next, _ := gpt.NextToken() // untrained here; ExampleGPT_NextToken trains first
	s, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.8, TopK: 10, Seed: 1})
	prompt := []int{0, 1, 2}
	text, _ := nn.Generate(next, prompt, 50, s) // prompt and 50 new token ids
	fmt.Println(len(text), text[:3])
	// Output:
	// (256, 768) (512, 65) ()
	// 53 [0 1 2]
}
