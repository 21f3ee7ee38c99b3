package experiment_test

import (
	"context"
	"fmt"
	"os"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// A grid of networks: an MLP with ReLU and with GELU learns two spirals,
// five seeds each. Every run builds its own graph, loaders and optimizer
// from its setting and seed and trains with r.Train, which records a
// divergence in r.Diverged instead of failing the grid. The grid keeps
// each finished run in its own folder of Dir (curve.csv, run.json), so a
// second Grid.Run with Resume reads the runs back instead of training them
// again. A program also passes r.Dir to train.Config.Dir for the
// trainer's metrics and checkpoints (left out here: a checkpoint every
// epoch of every run takes seconds to write).
func Example_train() {
	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 100, Noise: 0.05, Seed: 1})
	trainSet, valSet, _ := data.Split(0.2, 1)
	dir, _ := os.MkdirTemp("", "grid")
	defer os.RemoveAll(dir)
	grid := experiment.Grid[activation.Activation]{Settings: []activation.Activation{activation.ReLU, activation.GELU},
		Seeds: []uint64{1, 2, 3, 4, 5}, Name: activation.Activation.Key, Metrics: []string{"train_loss", "val_loss"},
		Dir: dir, Fingerprint: "spirals 100 per class, 30 epochs", Resume: true}
	run := func(r *experiment.Run[activation.Activation]) error {
		g, _ := graph.New(tensor.Float64, r.Seed)
		mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{16, 16}, Out: 2, Activation: r.Setting})
		x, _ := g.Input("x", 40, 2)
		y, _ := g.Input("y", 40)
		logits, _ := mlp.Forward(x)
		loss, _ := nn.CrossEntropyLoss(logits, y)
		tl, _ := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: 40, Shuffle: true, Seed: r.Seed, Dtype: tensor.Float64})
		vl, _ := datasets.NewLoader(valSet, datasets.LoaderConfig{BatchSize: 40, Dtype: tensor.Float64})
		t, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss},
			&optim.SGD{LearningRate: 0.1, Momentum: 0.9}, tl, vl, train.Config{Epochs: 30, Quiet: true,
				OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
					return r.Curve.Add(e.Step, e.TrainLoss, e.ValLoss)
				}})
		if err != nil {
			return err
		}
		return r.Train(context.Background(), t)
	}
	for range 2 {
		runs, err := grid.Run(run)
		if err != nil {
			fmt.Println(err)
			return
		}
		groups := experiment.Groups(runs)
		for _, g := range groups {
			b := g.Band("val_loss")
			last := len(b.Steps) - 1
			fmt.Printf("%s: validation loss at step %d: median %.2f, seeds from %.2f to %.2f\n", g.Name, b.Steps[last], b.Median[last], b.Min[last], b.Max[last])
		}
		p := experiment.Compare(groups[1].Final("val_loss"), groups[0].Final("val_loss"))
		fmt.Printf("GELU lower in %d of %d seeds (sign test p = %.3f); runs read back: %v\n", p.Lower, p.N, p.P, runs[0].Resumed)
	}
	// Output:
	// relu: validation loss at step 120: median 0.24, seeds from 0.22 to 0.49
	// gelu: validation loss at step 120: median 0.57, seeds from 0.54 to 0.57
	// GELU lower in 0 of 5 seeds (sign test p = 1.000); runs read back: false
	// relu: validation loss at step 120: median 0.24, seeds from 0.22 to 0.49
	// gelu: validation loss at step 120: median 0.57, seeds from 0.54 to 0.57
	// GELU lower in 0 of 5 seeds (sign test p = 1.000); runs read back: true
}
