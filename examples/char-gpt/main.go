// Char-gpt trains a small character-level language model on Newton's
// Opticks once per feed-forward variant (ReLU, GELU, GELU-tanh, SiLU and
// the gated GEGLU, SwiGLU, ReGLU at equal parameter count) and seed, every
// variant on the same seed's batches, and checks three claims with paired
// sign tests over seeds: GELU beats ReLU on language (doc 004), GELU
// converges faster (doc 001), and Shazeer 2020's ordering (gated below
// ungated; GEGLU ≈ SwiGLU < ReGLU). Validation loss is in bits per
// character, median and min–max over seeds; the report ends with text
// sampled from every model at the same seed and temperature.
//
// The model is nn.GPT (nanoGPT's: causal self-attention, pre-LN blocks,
// tied embeddings) with the MLP of -mlp, trained on every position of each
// window; validation scores the last position (transformer.GPTModel).
//
//	go run ./examples/char-gpt            # 7 variants × 5 seeds: about 1½ minutes*
//	go run ./examples/char-gpt -full      # 4× the steps
//	go run ./examples/char-gpt -mlp relu,gelu,geglu -seeds 8 -steps 2000
//
// *The report states the time of its own training steps.
//
// It writes to -out: <mlp>/seed<n>/ (the trainer's files), params.csv,
// results.csv, curves.csv, loss.png, samples.csv, claims.csv, summary.json
// and report.md, whose prose is report.md.tmpl. This file reads like
// nanoGPT's train.py: configuration, data, model, training, sampling.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on. The tagged fields are this
// program's own flags (experiment.BindFlags), checked by
// experiment.CheckFlags; experiment.Flags are the shared ones. -mlp's help
// spells out transformer.MLPNames() (a tag is a constant; a test checks it).
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers

	TextFile    string             `flag:"text" help:"UTF-8 text file to model (default: Newton's Opticks, embedded)"`
	MLPs        experiment.Strings `flag:"mlp" help:"comma-separated feed-forward variants: geglu, gelu, gelu_tanh, reglu, relu, silu, swiglu"`
	T           int                `flag:"T" help:"context length in characters (nanoGPT's block_size)" check:"min=1"`
	DModel      int                `flag:"d-model" help:"model width" check:"min=1"`
	Heads       int                `flag:"heads" help:"attention heads; must divide -d-model" check:"min=1"`
	Blocks      int                `flag:"blocks" help:"Transformer blocks" check:"min=1"`
	FF          int                `flag:"ff" help:"inner width of an ungated MLP; gated ones get 2/3 of it (equal parameters)" check:"min=3"`
	Batch       int                `flag:"batch" help:"windows per step" check:"min=1"`
	Steps       int                `flag:"steps" help:"optimizer steps per run" check:"min=1"`
	EvalEvery   int                `flag:"eval-every" help:"evaluate every this many steps" check:"min=1"`
	Warmup      int                `flag:"warmup" help:"steps of linear warmup before the cosine decay" check:"min=0"`
	LR          float64            `flag:"lr" help:"peak learning rate of AdamW"`
	Clip        float64            `flag:"clip" help:"clip the global gradient norm to this; 0: off"`
	ValWindows  int                `flag:"val-windows" help:"validation windows scored (a seeded sample); 0: all" check:"min=0"`
	SampleLen   int                `flag:"sample" help:"characters sampled from each model for the report" check:"min=0"`
	Temperature float64            `flag:"temperature" help:"sampling temperature"`
	DPI         int                `flag:"dpi" help:"resolution of the plot in dots per inch" check:"min=0"`
	Full        bool               `flag:"full" help:"the longer run: 4× -steps, -eval-every and -warmup"`
	Recompute   bool               `flag:"recompute" help:"recompute block activations in the backward pass (less memory, more time)"`
	Quiet       bool               `flag:"quiet" help:"no progress output"`

	Progress io.Writer // nil: os.Stderr
	Args     []string  // the command line shown in report.md
}

// defaults: sized so that 7 variants × 5 seeds of the GPT train in under
// 15 minutes on 2 busy cores; each step trains Batch·T = 512 next-character
// predictions. The learning rate was the better of 3e-3 and 8e-3 for GELU
// and ReLU in 400-step runs of seed 1 (width 64, batch 32).
func defaults() config {
	return config{Flags: experiment.Flags{Out: "out/char-gpt", Seed: 1, Seeds: 5, Workers: 2},
		MLPs: experiment.Strings{"relu", "gelu", "gelu_tanh", "silu", "geglu", "swiglu", "reglu"},
		T:    32, DModel: 48, Heads: 4, Blocks: 2, FF: 192, Batch: 16, Steps: 400, EvalEvery: 100, Warmup: 40, LR: 8e-3, Clip: 1,
		ValWindows: 1024, SampleLen: 300, Temperature: 0.8, DPI: 144, Args: os.Args}
}

func parseFlags() (config, error) {
	c := defaults()
	c.Flags.Register(flag.CommandLine, experiment.SeedsFlag)
	if err := experiment.BindFlags(flag.CommandLine, &c); err != nil {
		return c, err
	}
	experiment.ParseCommandLine("char-gpt")
	if c.Full {
		c.Steps, c.EvalEvery, c.Warmup = 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
	}
	return c, nil
}

func (c config) check() error {
	mlp := func(m string) bool { _, ok := transformer.MLPs[m]; return ok }
	if err := cmp.Or(experiment.CheckNames("mlp", c.MLPs, mlp, transformer.MLPNames()), experiment.CheckFlags(c), c.Flags.Check(experiment.SeedsFlag)); err != nil {
		return err
	}
	switch {
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case !(c.LR > 0 && c.LR <= 100) || !(c.Clip >= 0) || !(c.Temperature >= 0 && c.Temperature <= 100):
		return fmt.Errorf("-lr %v -clip %v -temperature %v: want 0 < lr ≤ 100 (AdamW's decay needs lr·0.01 ≤ 1), clip ≥ 0, 0 ≤ temperature ≤ 100", c.LR, c.Clip, c.Temperature)
	}
	return nil
}

// adamW is the training recipe of c's flags.
func (c config) adamW() transformer.AdamW {
	return transformer.AdamW{Batch: c.Batch, Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: c.LR, Clip: c.Clip}
}

func main() {
	c, err := parseFlags()
	if err == nil {
		// Ctrl-C or SIGTERM stops the runs in progress at their next step,
		// leaving a checkpoint and a model in each run's folder.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		_, err = run(ctx, c)
		stop()
	}
	experiment.Exit("char-gpt", c.Out, err)
}

type runResult = experiment.Run[string]

// data is the task shared by every run.
type data = transformer.CharData

type results struct {
	Data data
	Runs []*runResult // seeds outermost, then -mlp order
}

// loadData checks c and reads the task it describes.
func loadData(c config) (d data, err error) {
	if err := c.check(); err != nil {
		return d, err
	}
	text, name, err := transformer.CharText(c.TextFile)
	if err != nil {
		return d, err
	}
	if d, err = transformer.NewCharData(text, name, datasets.CharTaskConfig{Context: c.T, ValFraction: 0.1, Seed: c.Seed}, c.ValWindows); err != nil {
		return d, fmt.Errorf("-T %d: %w", c.T, err)
	}
	if d.Train.Len() < c.Batch || d.Val.Len() == 0 {
		return d, fmt.Errorf("%d training and %d validation windows of %d characters: want a batch of %d and a validation window; use a longer text or smaller -batch, -T",
			d.Train.Len(), d.Val.Len(), c.T, c.Batch)
	}
	return d, nil
}

// gpt is nanoGPT's model (pre-LN causal blocks, learned positions, tied
// input and output embeddings, no dropout) with the MLP mlp.
func (c config) gpt(vocab int, mlp string) nn.GPTConfig {
	cfg := nn.GPTConfig{BlockSize: c.T, VocabSize: vocab, Layers: c.Blocks, Heads: c.Heads, Dim: c.DModel}
	cfg.Hidden, cfg.Activation, cfg.Gate = transformer.MLPs[mlp].Block(c.FF)
	return cfg
}

func run(ctx context.Context, c config) (*results, error) {
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	res := &results{Data: d}
	grid := experiment.NewGrid(c.Flags, c.MLPs, func(s string) string { return s }, "train_bpc", "val_bpc")
	var progress io.Writer
	grid.Progress, progress = c.Flags.Progress(c.Quiet, c.Progress)
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainOne(ctx, c, d, progress, r) }); err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

// trainOne trains the GPT of the run's MLP as run r: AdamW, warmup and
// cosine decay (transformer.AdamW), then samples text from it.
func trainOne(ctx context.Context, c config, d data, progress io.Writer, r *runResult) error {
	cfg := c.gpt(d.Vocab.Size(), r.Setting)
	cfg.Recompute = c.Recompute
	m, gpt, err := transformer.GPTModel(cfg, c.Batch, r.Seed)
	if err != nil {
		return err
	}
	if _, err := transformer.TrainAdamW(ctx, r, m, d.Train, d.Eval, c.adamW(), progress, func(e train.EvalInfo) error {
		return r.Curve.Add(e.Step, bits(e.TrainLoss), bits(e.ValLoss))
	}); err != nil || r.Diverged != "" { // a diverged model has nothing to sample
		return err
	}
	// c.SampleLen characters after the first T of the validation text, at
	// c.Temperature, the sampler seeded by -seed for every model.
	text, err := transformer.Continue(gpt, experiment.Convert[int](d.Val.X[:c.T]), c.SampleLen, nn.SampleConfig{Temperature: c.Temperature, Seed: c.Seed})
	r.Vectors["sample"] = experiment.Convert[float64](text)
	return err
}

func bits(nats float64) float64 { return nats / math.Ln2 }
