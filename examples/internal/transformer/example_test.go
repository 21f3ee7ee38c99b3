package transformer_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
)

// char-gpt's model and recipe on a repeated sentence: GPTModel, trained
// by TrainAdamW as one run of an experiment grid (made by hand here; a
// program's Grid.Run makes it), then sampled greedily with Continue. The
// body is the package documentation's sketch.
func Example() {
	d, err := transformer.NewCharData(strings.Repeat("gelu is smooth. ", 40), "a sentence",
		datasets.CharTaskConfig{Context: 8, ValFraction: 0.1, Seed: 1, ChunkLen: 64}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := nn.GPTConfig{BlockSize: 8, VocabSize: d.Vocab.Size(), Layers: 1, Heads: 2, Dim: 16}
	m, gpt, err := transformer.GPTModel(cfg, 16, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := &experiment.Run[string]{Seed: 1, Curve: experiment.NewCurve("val_loss")} // no Dir: no files
	recipe := transformer.AdamW{Batch: 16, Steps: 150, EvalEvery: 50, Warmup: 10, LR: 2e-2, Clip: 1}
	if _, err := transformer.TrainAdamW(context.Background(), r, m, d.Train, d.Eval, recipe, nil,
		func(e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }); err != nil {
		fmt.Println(err)
		return
	}
	prompt, _ := d.Vocab.Encode("gelu")
	out, _ := transformer.Continue(gpt, prompt, 20, nn.SampleConfig{Temperature: 0, Seed: 1}) // greedy
	text, _ := d.Vocab.Decode(out)
	fmt.Printf("validation loss %.2f → %.2f; %q\n", r.Curve.First("val_loss"), r.Curve.Last("val_loss"), text)
	// Output:
	// validation loss 2.50 → 0.01; " is smooth. gelu is "
}
