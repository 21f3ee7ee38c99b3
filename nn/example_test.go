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
