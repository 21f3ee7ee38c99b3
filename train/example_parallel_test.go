package train_test

import (
	"context"
	"fmt"
	"log"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/dist"
	"gorgonia.org/tensor"
)

// Data-parallel training, the package documentation's sketch: started by
// mpirun -np N, each of the N processes trains on its share of every batch
// of 40 and all take the steps one process takes; run here as a process
// alone (ExampleTrainer_Run's steps, bit for bit).
func Example_dataParallel() {
	c, err := dist.Open(false) // true for a -dist flag; under mpirun, the job's ranks anyway
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	const batch = 40 // the global batch
	lo, hi, _ := dist.Shard(batch, c.Rank(), c.Size())
	model := spiralsMLP(hi - lo) // the graph's rows: this rank's share
	trainData, valData := spirals(batch)
	t, err := train.New(model, &optim.SGD{LearningRate: 0.1, Momentum: 0.9}, trainData, valData,
		train.Config{Epochs: 100, Quiet: true, Comm: c})
	if err != nil {
		log.Fatal(err)
	}
	res, err := t.Run(context.Background())
	if err != nil {
		log.Fatal(err) // the same error on every rank
	}
	last := res.Evals[len(res.Evals)-1]
	fmt.Printf("%d steps, %.0f%% of the validation points right\n", res.Steps, 100*last.ValAccuracy)
	// Output: 800 steps, 99% of the validation points right
}

// spiralsMLP is ExampleTrainer_Run's model for batches of rows points.
func spiralsMLP(rows int) train.Model {
	g, _ := graph.New(tensor.Float64, 1)
	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{32, 32}, Out: 2})
	x, _ := g.Input("x", rows, 2)
	y, _ := g.Input("y", rows)
	logits, _ := mlp.Forward(x)
	loss, _ := nn.CrossEntropyLoss(logits, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}
}

// spirals is ExampleTrainer_Run's data in batches of batch points.
func spirals(batch int) (trainData, valData *datasets.Loader) {
	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 200, Noise: 0.05, Seed: 1})
	trainSet, valSet, _ := data.Split(0.2, 1)
	trainData, _ = datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: batch, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
	valData, _ = datasets.NewLoader(valSet, datasets.LoaderConfig{BatchSize: batch, Dtype: tensor.Float64})
	return trainData, valData
}
