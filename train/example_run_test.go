package train_test

import (
	"context"
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// The package documentation's sketch: an MLP learns two interleaved
// spirals with SGD-momentum in a few epochs, evaluated on held-out points
// after each epoch. With Config.Dir set it would also write the metrics,
// checkpoints and the model there.
func ExampleTrainer_Run() {
	g, _ := graph.New(tensor.Float64, 1)
	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{32, 32}, Out: 2})
	x, _ := g.Input("x", 40, 2)
	y, _ := g.Input("y", 40)
	logits, _ := mlp.Forward(x)
	loss, _ := nn.CrossEntropyLoss(logits, y)

	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 200, Noise: 0.05, Seed: 1})
	trainSet, valSet, _ := data.Split(0.2, 1)
	tl, _ := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: 40, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
	vl, _ := datasets.NewLoader(valSet, datasets.LoaderConfig{BatchSize: 40, Dtype: tensor.Float64})
	t, _ := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss},
		&optim.SGD{LearningRate: 0.1, Momentum: 0.9}, tl, vl, train.Config{Epochs: 100, Quiet: true})
	res, err := t.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	first, last := res.Evals[0], res.Evals[len(res.Evals)-1]
	fmt.Printf("%d steps: validation loss %.2f after epoch %d, %.2f after epoch %d\n", res.Steps, first.ValLoss, first.Epoch, last.ValLoss, last.Epoch)
	fmt.Printf("%.0f of %d validation points right\n", last.ValAccuracy*float64(valSet.Len()), valSet.Len())
	// Output:
	// 800 steps: validation loss 0.69 after epoch 0, 0.03 after epoch 99
	// 79 of 80 validation points right
}
