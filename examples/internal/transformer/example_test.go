package transformer_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// char-gpt's pieces on a repeated sentence: an MLP variant by name, a GPT
// trained by nanoGPT's recipe as one run of an experiment grid (made by
// hand here; a program's Grid.Run makes it), then sampled greedily with
// Continue. The body is the package documentation's sketch.
func Example() {
	vocab, _ := datasets.NewCharVocab("gelu is smooth. ")
	ids, _ := vocab.Encode(strings.Repeat("gelu is smooth. ", 40))
	trainData, _ := datasets.NewTokenStream(ids, datasets.TokenStreamConfig{BatchSize: 8, BlockSize: 16, Seed: 1})
	valData, _ := datasets.NewTokenStream(ids[:160], datasets.TokenStreamConfig{BatchSize: 8, BlockSize: 16, Tile: true})
	mlp, err := transformer.ParseMLP("swiglu") // or "mish", once registered with activation.Register
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := nn.GPTConfig{BlockSize: 16, VocabSize: vocab.Size(), Layers: 1, Heads: 2, Dim: 16, NoBias: true}
	cfg.Hidden, cfg.Activation, cfg.Gate = mlp.Block(4 * cfg.Dim)
	g, _ := graph.New(tensor.Float32, 1)
	gpt, _ := nn.NewGPT(g, "", cfg)
	x, _ := g.Input("x", 8, 16)
	y, _ := g.Input("y", 8, 16)
	logits, loss, _ := gpt.Loss(x, y)
	m := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Module: gpt}
	r := &experiment.Run[string]{Seed: 1, Curve: experiment.NewCurve("val_loss")} // no Dir: no files
	recipe := transformer.NanoGPT{Steps: 150, EvalEvery: 50, Warmup: 10, LR: 1e-2, MinLR: 1e-3, Beta1: 0.9, Beta2: 0.99, WeightDecay: 0.1, Clip: 1}
	if _, err := transformer.TrainNanoGPT(context.Background(), r, m, trainData, valData, recipe,
		train.Config{Quiet: true, OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }}); err != nil {
		fmt.Println(err)
		return
	}
	prompt, _ := vocab.Encode("gelu")
	out, _ := transformer.Continue(gpt, prompt, 20, nn.SampleConfig{Temperature: 0, Seed: 1}) // greedy
	text, _ := vocab.Decode(out)
	fmt.Printf("validation loss %.2f → %.2f; %q\n", r.Curve.First("val_loss"), r.Curve.Last("val_loss"), text)
	// Output: validation loss 2.49 → 0.03; " is smooth. gelu is "
}
