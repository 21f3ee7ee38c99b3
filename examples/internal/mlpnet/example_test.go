package mlpnet_test

import (
	"context"
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/mlpnet"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// The classifier of the MNIST programs, here on two spirals, trained with
// a probe every 100 steps (the programs count dead units or measure
// gradients there). The body is the package documentation's sketch.
func Example() {
	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 200, Noise: 0.05, Seed: 1})
	l, _ := datasets.NewLoader(data, datasets.LoaderConfig{BatchSize: 40, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
	model, mlp, err := mlpnet.Classifier(tensor.Float64, 1, 40, nn.MLPConfig{In: 2, Hidden: []int{32, 32}, Out: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	onStep, _ := mlpnet.ProbeSteps(100, 300, func(step int, loss float64) error {
		fmt.Printf("step %d: mean loss %.2f; %d hidden layers to probe\n", step, loss, len(mlp.Pre))
		return nil
	})
	t, _ := train.New(model, &optim.SGD{LearningRate: 0.1, Momentum: 0.9}, l, nil, train.Config{MaxSteps: 300, Quiet: true, OnStep: onStep})
	if _, err := t.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// step 0: mean loss NaN; 2 hidden layers to probe
	// step 100: mean loss 0.63; 2 hidden layers to probe
	// step 200: mean loss 0.50; 2 hidden layers to probe
	// step 300: mean loss 0.19; 2 hidden layers to probe
}
