// Mixed-precision trains examples/char-gpt's GPT (its default model and
// nanoGPT recipe, GELU MLP, one learning rate) on Newton's Opticks three
// times per seed, on the same batches: in float32; with bfloat16 autocast
// (graph.SetAutocast: the matrix products, forward and backward, on
// bfloat16 operands with float32 sums; weights, optimizer state,
// LayerNorm, softmax, GELU and the loss in float32, as PyTorch's
// torch.autocast("cpu", dtype=torch.bfloat16) keeps them); and, as a
// control, in float32 from initial weights each moved by one float32 step
// (ulp), a perturbation 2¹⁶ times smaller than bfloat16's rounding: how
// far a training run's end moves for reasons that have nothing to do with
// bfloat16. It checks that autocast keeps the final validation loss within
// -tolerance (1%) of float32's, seed by seed and as the median.
//
//	go run ./examples/mixed-precision            # 5 seeds: a few minutes on 2 cores*
//	go run ./examples/mixed-precision -steps 4800
//
// *timing.csv has each run's wall time on this machine; the speed of
// bfloat16 against float32 is examples/benchmark's to measure.
//
// It writes to -out: <setting>/seed<n>/ (the trainer's files),
// results.csv, curves.csv, summary.json, report.md, whose prose is
// report.md.tmpl, and timing.csv (the wall times: the one file that
// differs between two runs of the same command).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// config is everything a run depends on: char-gpt's model and recipe at
// one learning rate, and the tolerance of the claims.
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers

	TextFile    string  `flag:"text" help:"UTF-8 text file to model (default: Newton's Opticks, embedded)"`
	T           int     `flag:"T" help:"context length in characters (block_size)" check:"positive"`
	DModel      int     `flag:"d-model" help:"model width (n_embd)" check:"positive"`
	Heads       int     `flag:"heads" help:"attention heads (n_head); must divide -d-model" check:"positive"`
	Blocks      int     `flag:"blocks" help:"Transformer blocks (n_layer)" check:"positive"`
	FF          int     `flag:"ff" help:"inner width of the GELU MLP (0: 4·d-model)" check:"min=0"`
	Batch       int     `flag:"batch" help:"windows per step (batch_size)" check:"positive"`
	Steps       int     `flag:"steps" help:"optimizer steps per run (max_iters, lr_decay_iters)" check:"positive"`
	EvalEvery   int     `flag:"eval-every" help:"evaluate every this many steps (eval_interval)" check:"positive"`
	Warmup      int     `flag:"warmup" help:"steps of linear warmup (warmup_iters)" check:"min=0"`
	LR          float64 `flag:"lr" help:"peak learning rate (learning_rate; min_lr is a tenth)" check:"positive"`
	Beta2       float64 `flag:"beta2" help:"AdamW's beta2 (beta1 is 0.9)" check:"min=0,below=1"`
	WeightDecay float64 `flag:"weight-decay" help:"AdamW's weight decay on matrices and embeddings" check:"min=0"`
	Clip        float64 `flag:"clip" help:"clip the global gradient norm to this (grad_clip; 0: off)" check:"min=0"`
	ValChars    int     `flag:"val-chars" help:"score the first this many held-out characters (0: all of the last 10%)" check:"min=0"`
	Tolerance   float64 `flag:"tolerance" help:"largest relative change of the final validation loss the claims allow" check:"positive,below=1"`
	Quiet       bool    `flag:"quiet" help:"no progress output"`

	Progress io.Writer // nil: os.Stderr
	Args     []string  // the command line shown in report.md
}

// defaults are examples/char-gpt's, at the middle of its learning rates.
func defaults() config {
	return config{Flags: experiment.Flags{Out: "out/mixed-precision", Seed: 1, Seeds: 5, Workers: 2},
		T: 32, DModel: 48, Heads: 4, Blocks: 2, Batch: 16, Steps: 1200, EvalEvery: 150, Warmup: 60, LR: 4e-3,
		Beta2: 0.99, WeightDecay: 0.1, Clip: 1, ValChars: 16384, Tolerance: 0.01, Args: os.Args}
}

// setting is one training of a seed: its precision, and whether the
// initial weights are perturbed (the control).
type setting struct {
	Precision graph.Precision
	Perturbed bool
}

func (s setting) String() string {
	if s.Perturbed {
		return s.Precision.String() + "_perturbed"
	}
	return s.Precision.String()
}

// settings are the trainings of a seed, the baseline first.
var settings = []setting{{graph.Full, false}, {graph.BFloat16, false}, {graph.Full, true}}

func main() {
	c := defaults()
	c.Flags.Register(flag.CommandLine, experiment.SeedsFlag)
	err := experiment.BindFlags(flag.CommandLine, &c)
	if err == nil {
		experiment.ParseCommandLine("mixed-precision")
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		_, err = run(ctx, c)
		stop()
	}
	experiment.Exit("mixed-precision", c.Out, err)
}

type runResult = experiment.Run[setting]

// data is the text, split as char-gpt splits it: the last 10% held out.
type data struct {
	Name       string
	Chars      int
	Train, Val []int
	Vocab      *datasets.CharVocab
}

type results struct {
	Data data
	Runs []*runResult // seeds outermost, then settings
}

func (c config) check() error {
	if err := cmp.Or(experiment.CheckFlags(c), c.Flags.Check(experiment.SeedsFlag)); err != nil {
		return err
	}
	if c.DModel%c.Heads != 0 {
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	}
	return nil
}

// loadData checks c and reads the text it names.
func loadData(c config) (d data, err error) {
	if err := c.check(); err != nil {
		return d, err
	}
	text, name, err := transformer.CharText(c.TextFile)
	if err != nil {
		return d, err
	}
	d.Name, d.Chars = name, len([]rune(text))
	if d.Vocab, err = datasets.NewCharVocab(text); err != nil {
		return d, err
	}
	ids, err := d.Vocab.Encode(text)
	if err == nil {
		d.Train, d.Val, err = datasets.SplitTokens(ids, 0.1)
	}
	if err != nil {
		return d, fmt.Errorf("%s: %w", d.Name, err)
	}
	if c.ValChars > 0 && c.ValChars < len(d.Val) {
		d.Val = d.Val[:c.ValChars]
	}
	if len(d.Train) <= c.T || len(d.Val) <= c.T {
		return d, fmt.Errorf("%s: %d characters to train on and %d to validate on: want more than -T %d in each", d.Name, len(d.Train), len(d.Val), c.T)
	}
	return d, nil
}

func run(ctx context.Context, c config) (*results, error) {
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	res := &results{Data: d}
	grid := experiment.NewGrid(c.Flags, settings, setting.String, "train_bpc", "val_bpc")
	var progress io.Writer
	grid.Progress, progress = c.Flags.Progress(c.Quiet, c.Progress)
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainOne(ctx, c, d, progress, r) }); err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

// trainOne builds char-gpt's GPT (nanoGPT's, bias=False, tied embeddings,
// no dropout) with a GELU MLP in the run's setting and trains it by
// nanoGPT's recipe on the batches of the run's seed, scoring every
// position of the held-out windows.
func trainOne(ctx context.Context, c config, d data, progress io.Writer, r *runResult) error {
	cfg := nn.GPTConfig{BlockSize: c.T, VocabSize: d.Vocab.Size(), Layers: c.Blocks, Heads: c.Heads, Dim: c.DModel, NoBias: true}
	cfg.Hidden, cfg.Activation, cfg.Gate = transformer.MLPs["gelu"].Block(cmp.Or(c.FF, 4*c.DModel))
	g, err := graph.New(tensor.Float32, r.Seed)
	if err != nil {
		return err
	}
	if err := g.SetAutocast(r.Setting.Precision); err != nil {
		return err
	}
	model, err := nn.NewGPT(g, "", cfg)
	if err != nil {
		return err
	}
	if r.Setting.Perturbed {
		perturb(g, r.Seed)
	}
	x, _ := g.Input("x", c.Batch, c.T)
	y, _ := g.Input("y", c.Batch, c.T)
	logits, loss, err := model.Loss(x, y)
	if err != nil {
		return err
	}
	m := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Args: model.Args()}
	trainData, err1 := datasets.NewTokenStream(d.Train, datasets.TokenStreamConfig{BatchSize: c.Batch, BlockSize: c.T, Batches: c.Steps, Seed: r.Seed})
	valData, err2 := datasets.NewTokenStream(d.Val, datasets.TokenStreamConfig{BatchSize: c.Batch, BlockSize: c.T, Tile: true})
	if err := cmp.Or(err1, err2); err != nil {
		return err
	}
	recipe := transformer.NanoGPT{Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: c.LR, MinLR: c.LR / 10,
		Beta1: 0.9, Beta2: c.Beta2, WeightDecay: c.WeightDecay, Clip: c.Clip}
	_, err = transformer.TrainNanoGPT(ctx, r, m, trainData, valData, recipe, train.Config{Quiet: progress == nil, Progress: progress,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
			return r.Curve.Add(e.Step, e.TrainLoss/math.Ln2, e.ValLoss/math.Ln2)
		}})
	return err
}

// perturb moves every initial weight of g one float32 step up or down,
// the direction drawn from the seed.
func perturb(g *graph.Graph, seed uint64) {
	rnd := rng.New(seed, "mixed-precision perturbation")
	for _, p := range g.ParamTensors() {
		w := p.Value.Data().([]float32)
		for i, x := range w {
			w[i] = math.Nextafter32(x, float32(math.Inf(2*rnd.IntN(2)-1)))
		}
	}
	graph.MarkParamsChanged()
}
