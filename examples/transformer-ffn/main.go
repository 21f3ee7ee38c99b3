// Transformer-ffn trains a character-level next-character model made of
// Transformer feed-forward blocks, once per activation (ReLU and GELU by
// default) and seed, every activation from the same initial weights and in
// the same batch order, and compares their loss curves.
//
// There is no attention: the context is a window of the previous K
// characters. Each is embedded (nn.Embedding, e numbers per character), the
// K·e numbers are projected to width d (nn.Linear), then L pre-LN blocks
// x + fc2(act(fc1(LN(x)))) (nn.FeedForward, inner width d_ff), a final
// LayerNorm and a Linear to the vocabulary; the loss is the cross-entropy of
// the next character. Training is SGD with momentum and a warmed-up cosine
// learning rate. The default peak rate, 0.2, was the best of 0.05, 0.1, 0.2
// and 0.4 in 200-step GELU runs without clipping (tuned for GELU only). At
// that rate without clipping ReLU's loss spiked at the end of warmup and it
// finished clearly behind GELU; with the gradient norm clipped to 1 (the
// default, as in nanoGPT) neither spiked and they finished level. The
// report flags such spikes ("largest rise of train loss").
// Parameter names are those of the PyTorch module CharFFN in
// torch_model.py, which can also write PyTorch-initialized weights for -init:
//
//	/usr/bin/python3 examples/transformer-ffn/torch_model.py --init torch.safetensors
//	go run ./examples/transformer-ffn -init torch.safetensors
//
// The text is Newton's Opticks (embedded) unless -text names a UTF-8 file;
// validation windows come from chunks of the text never trained on (see
// datasets.CharTask). This file reads top to bottom: flags, data, training
// (CharFFNModel builds the model from nn/), report (report.go
// computes what report.md shows, report.md.tmpl says it). Run it from the
// module root:
//
//	go run ./examples/transformer-ffn                      # ReLU vs GELU, 3 seeds: about a minute on 2 cores
//	go run ./examples/transformer-ffn -acts relu,gelu,silu -steps 600 -seeds 5
//
// It writes to -out: <activation>/seed<n>/ (the trainer's steps.csv,
// evals.csv and model.safetensors per run), curves.csv (every evaluation of
// every run), setup.csv, results.csv, comparison.csv, loss.png,
// loss_val_late.png, summary.json, report.md and timing.csv (each run's
// wall time: the one file that differs between two runs of the same
// command). The speed of one training step is measured by
//
//	go test ./examples/transformer-ffn -run '^$' -bench TrainStep -benchtime 10x
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"io"
	"math"
	"os"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on. The tagged fields are this
// program's own flags (experiment.BindFlags); -seed is the seed of the
// validation split, and the first of the runs' seeds (initial weights and
// batch order).
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers

	TextFile    string                 `flag:"text" help:"UTF-8 text file to model (default: Newton's Opticks, embedded)"`
	Acts        experiment.Activations `flag:"acts" help:"comma-separated activations to compare: relu, gelu, gelu_tanh, gelu_sigmoid, softplus, silu, elu, sigmoid_gated[:β]" check:"nonempty"`
	Context     int                    `flag:"context" help:"K, previous characters seen per prediction" check:"positive"`
	Embed       int                    `flag:"embed" help:"e, embedding size per character" check:"positive"`
	Dim         int                    `flag:"dim" help:"d, model width" check:"positive"`
	Hidden      int                    `flag:"hidden" help:"d_ff, inner width of each feed-forward block" check:"positive"`
	Layers      int                    `flag:"layers" help:"L, number of feed-forward blocks" check:"min=0"`
	Batch       int                    `flag:"batch" help:"windows (positions) per step" check:"positive"`
	Steps       int                    `flag:"steps" help:"optimizer steps per run" check:"positive"`
	EvalEvery   int                    `flag:"eval-every" help:"evaluate on the validation windows every this many steps" check:"positive"`
	ValWindows  int                    `flag:"val-windows" help:"validation windows scored (a seeded sample of the held-out text); 0: all" check:"min=0"`
	LR          float64                `flag:"lr" help:"peak learning rate of SGD" check:"positive"`
	Momentum    float64                `flag:"momentum" help:"SGD momentum" check:"min=0,below=1"`
	Warmup      int                    `flag:"warmup" help:"steps of linear learning-rate warmup; then cosine decay to 0 at -steps" check:"min=0"`
	Clip        float64                `flag:"clip" help:"clip the global gradient norm to this; 0: off" check:"min=0"`
	ValFraction float64                `flag:"val-fraction" help:"fraction of the text's chunks held out for validation"`
	ChunkLen    int                    `flag:"chunk" help:"characters per chunk of the train/validation split"`
	Init        string                 `flag:"init" help:"start every run from this safetensors file (torch_model.py --init, or a model.safetensors of this program)"`
	Quiet       bool                   `flag:"quiet" help:"no progress output"`
	DPI         int                    `flag:"dpi" help:"resolution of the PNG plots in dots per inch" check:"min=0"`

	Progress io.Writer // nil: os.Stderr
	Args     []string  // the command line shown in report.md
}

func main() {
	c := config{Flags: experiment.Flags{Out: "out/transformer-ffn", Seed: 1, Seeds: 3, Workers: 2},
		Acts: experiment.Activations{activation.ReLU, activation.GELU}, Context: 8, Embed: 32, Dim: 256, Hidden: 1024,
		Layers: 2, Batch: 512, Steps: 300, EvalEvery: 30, ValWindows: 8192, LR: 0.2, Momentum: 0.9, Warmup: 30,
		Clip: 1, ValFraction: 0.1, ChunkLen: 4096, DPI: 144, Args: os.Args}
	experiment.Main("transformer-ffn", &c.Flags, experiment.SeedsFlag, &c, func(ctx context.Context) error { _, err := run(ctx, c); return err })
}

type runResult = experiment.Run[activation.Activation]

// metrics are what each run records at every evaluation: the mean training
// loss since the evaluation before, and the validation windows' loss (nats
// and bits per character) and accuracy.
var metrics = []string{"train_loss", "val_loss", "val_bpc", "val_accuracy"}

// results is what run returns besides the files.
type results struct {
	Data  transformer.CharData
	Shape CharFFN
	Runs  []*runResult // seeds outermost, then activations in -acts order
}

// loadData checks c and cuts the text into training and validation windows.
func loadData(c config) (d transformer.CharData, err error) {
	if err := c.check(); err != nil {
		return d, err
	}
	text, name, err := transformer.CharText(c.TextFile)
	if err == nil {
		cfg := datasets.CharTaskConfig{Context: c.Context, ValFraction: c.ValFraction, Seed: c.Seed, ChunkLen: c.ChunkLen}
		d, err = transformer.NewCharData(text, name, cfg, c.ValWindows)
	}
	if err == nil && d.Train.Len() < c.Batch {
		err = fmt.Errorf("%d training windows, fewer than one batch of %d: use a longer text or a smaller -batch", d.Train.Len(), c.Batch)
	}
	return d, err
}

func run(ctx context.Context, c config) (*results, error) {
	d, err := loadData(c) // checks c first
	if err != nil {
		return nil, err
	}
	s := CharFFN{Vocab: d.Vocab.Size(), Context: c.Context, Embed: c.Embed, Dim: c.Dim, Hidden: c.Hidden, Layers: c.Layers}
	grid := experiment.Grid[activation.Activation]{Settings: c.Acts, Seeds: experiment.SeedRange(c.Seed, c.Seeds), Name: key, Dir: c.Out,
		Workers: c.Workers, Metrics: metrics}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	if !c.Quiet {
		grid.Progress = c.Progress
	}
	runs, err := grid.Run(func(r *runResult) error { return trainOne(ctx, c, d, s, r) })
	if err != nil {
		return nil, err
	}
	res := &results{Data: d, Shape: s, Runs: runs}
	return res, writeReport(c, res)
}

// trainOne trains a fresh model with the run's activation. The initial
// weights and the batch order depend on the seed only.
func trainOne(ctx context.Context, c config, d transformer.CharData, s CharFFN, r *runResult) error {
	m, err := CharFFNModel(s, r.Setting, c.Batch, r.Seed)
	if err != nil {
		return err
	}
	if c.Init != "" {
		if err := loadInit(c.Init, m, s); err != nil {
			return err
		}
	}
	recipe := transformer.Cosine{Batch: c.Batch, Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: c.LR, Clip: c.Clip}
	t, err := transformer.TrainCosine(ctx, r, m, &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum}, d.Train, d.Eval, recipe, train.Config{
		Quiet: c.Quiet || c.Workers > 1, Progress: c.Progress,
		OnStep: r.RecordLoss("step_loss"),
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
			return r.Curve.Add(e.Step, e.TrainLoss, e.ValLoss, bits(e.ValLoss), e.ValAccuracy)
		}})
	if err != nil || r.Diverged != "" { // a diverged run has no final model to score
		return err
	}
	// Each window's loss under the final model, for the paired comparison.
	e, err := t.Evaluate(t.ValData)
	r.Vectors["val_rows"] = e.Rows
	return err
}

func bits(nats float64) float64 { return nats / math.Ln2 }

func (c config) check() error {
	return errors.Join(experiment.CheckFlags(c), c.Flags.Check(experiment.SeedsFlag))
}

// loadInit fills the model's parameters from a safetensors file, naming the
// model's shape when the file does not fit.
func loadInit(path string, m train.Model, s CharFFN) error {
	if err := train.LoadGraphWeights(path, m.Graph); err != nil {
		return fmt.Errorf("-init %s does not fit the model (%v; vocabulary from the text): %w", path, s, err)
	}
	return nil
}
