package train_test

import (
	"context"
	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// The README's training snippet: an MLP on MNIST with Adam. (It has no
// Output comment, so `go test` compiles it without running five epochs.)
func Example() {
	g, _ := graph.New(tensor.Float32, 42)
	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 784, Hidden: []int{128, 128}, Out: 10, Activation: activation.GELU})
	x, _ := g.Input("x", 128, 784)
	y, _ := g.Input("y", 128)
	logits, _ := mlp.Forward(x)
	loss, _ := nn.CrossEntropyLoss(logits, y)

	trainSet, testSet, _ := datasets.MNIST("")
	tl, _ := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: 128, Shuffle: true, Seed: 1, DropLast: true})
	vl, _ := datasets.NewLoader(testSet, datasets.LoaderConfig{BatchSize: 128})
	t, _ := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss},
		optim.NewAdam(1e-3), tl, vl, train.Config{Epochs: 5, Dir: "out/mnist"})
	t.Run(context.Background())
}
