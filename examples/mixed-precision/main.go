// Mixed-precision trains examples/char-gpt's GPT (its default model and
// recipe, GELU MLP) on Newton's Opticks three times per seed, on the same
// batches: in float32; with bfloat16 autocast (graph.SetAutocast: the
// matrix products, forward and backward, on bfloat16 operands with
// float32 sums; weights, optimizer state, LayerNorm, softmax, GELU and the
// loss in float32, as PyTorch's torch.autocast("cpu", dtype=torch.bfloat16)
// keeps them); and, as a control, in float32 from initial weights each
// moved by one float32 step (ulp), a perturbation 2¹⁶ times smaller than
// bfloat16's rounding: how far a training run's end moves for reasons
// that have nothing to do with bfloat16. It checks that autocast changes
// the final validation loss by at most -tolerance (1%), seed by seed.
//
//	go run ./examples/mixed-precision            # 5 seeds: about 2 minutes*
//	go run ./examples/mixed-precision -full      # 4× the steps
//
// *The report states the time of its own training steps; the speed of
// bfloat16 against float32 is examples/benchmark's to measure.
//
// It writes to -out: <precision>/seed<n>/ (the trainer's files),
// results.csv, curves.csv, summary.json and report.md, whose prose is
// report.md.tmpl.
package main

import (
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
)

// config is everything a run depends on: char-gpt's model and recipe, and
// the tolerance of the claim.
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers

	TextFile   string  `flag:"text" help:"UTF-8 text file to model (default: Newton's Opticks, embedded)"`
	T          int     `flag:"T" help:"context length in characters (nanoGPT's block_size)" check:"min=1"`
	DModel     int     `flag:"d-model" help:"model width" check:"min=1"`
	Heads      int     `flag:"heads" help:"attention heads; must divide -d-model" check:"min=1"`
	Blocks     int     `flag:"blocks" help:"Transformer blocks" check:"min=1"`
	FF         int     `flag:"ff" help:"inner width of the GELU MLP" check:"min=1"`
	Batch      int     `flag:"batch" help:"windows per step" check:"min=1"`
	Steps      int     `flag:"steps" help:"optimizer steps per run" check:"min=1"`
	EvalEvery  int     `flag:"eval-every" help:"evaluate every this many steps" check:"min=1"`
	Warmup     int     `flag:"warmup" help:"steps of linear warmup before the cosine decay" check:"min=0"`
	LR         float64 `flag:"lr" help:"peak learning rate of AdamW"`
	Clip       float64 `flag:"clip" help:"clip the global gradient norm to this; 0: off"`
	ValWindows int     `flag:"val-windows" help:"validation windows scored (a seeded sample); 0: all" check:"min=0"`
	Tolerance  float64 `flag:"tolerance" help:"largest relative change of the final validation loss the claim allows"`
	Full       bool    `flag:"full" help:"the longer run: 4× -steps, -eval-every and -warmup"`
	Quiet      bool    `flag:"quiet" help:"no progress output"`

	Progress io.Writer // nil: os.Stderr
	Args     []string  // the command line shown in report.md
}

// defaults are examples/char-gpt's, but for 4× its validation windows:
// the runs of a seed differ by about a percent, which 1024 windows do not
// resolve.
func defaults() config {
	return config{Flags: experiment.Flags{Out: "out/mixed-precision", Seed: 1, Seeds: 5, Workers: 2},
		T: 32, DModel: 48, Heads: 4, Blocks: 2, FF: 192, Batch: 16, Steps: 400, EvalEvery: 100, Warmup: 40, LR: 8e-3, Clip: 1,
		ValWindows: 4096, Tolerance: 0.01, Args: os.Args}
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
		if c.Full {
			c.Steps, c.EvalEvery, c.Warmup = 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		_, err = run(ctx, c)
		stop()
	}
	experiment.Exit("mixed-precision", c.Out, err)
}

type runResult = experiment.Run[setting]

type results struct {
	Data transformer.CharData
	Runs []*runResult // seeds outermost, then settings
}

func (c config) check() error {
	if err := experiment.CheckFlags(c); err != nil {
		return err
	}
	if err := c.Flags.Check(experiment.SeedsFlag); err != nil {
		return err
	}
	switch {
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case !(c.LR > 0 && c.LR <= 100) || !(c.Clip >= 0) || !(c.Tolerance > 0 && c.Tolerance < 1):
		return fmt.Errorf("-lr %v -clip %v -tolerance %v: want 0 < lr ≤ 100, clip ≥ 0, 0 < tolerance < 1", c.LR, c.Clip, c.Tolerance)
	}
	return nil
}

func run(ctx context.Context, c config) (*results, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	text, name, err := transformer.CharText(c.TextFile)
	if err != nil {
		return nil, err
	}
	d, err := transformer.NewCharData(text, name, datasets.CharTaskConfig{Context: c.T, ValFraction: 0.1, Seed: c.Seed}, c.ValWindows)
	if err != nil {
		return nil, fmt.Errorf("-T %d: %w", c.T, err)
	}
	if d.Train.Len() < c.Batch || d.Val.Len() == 0 {
		return nil, fmt.Errorf("%d training and %d validation windows: want a batch of %d and a validation window; use a longer text or smaller -batch, -T", d.Train.Len(), d.Val.Len(), c.Batch)
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

// trainOne trains the GPT of the run's setting: char-gpt's AdamW with
// warmup and cosine decay, on the batches of the run's seed.
func trainOne(ctx context.Context, c config, d transformer.CharData, progress io.Writer, r *runResult) error {
	cfg := nn.GPTConfig{BlockSize: c.T, VocabSize: d.Vocab.Size(), Layers: c.Blocks, Heads: c.Heads, Dim: c.DModel}
	cfg.Hidden, cfg.Activation, cfg.Gate = transformer.MLPs["gelu"].Block(c.FF)
	m, _, err := transformer.GPTModel(cfg, c.Batch, r.Seed)
	if err != nil {
		return err
	}
	if err := m.Graph.SetAutocast(r.Setting.Precision); err != nil {
		return err
	}
	if r.Setting.Perturbed {
		perturb(m.Graph, r.Seed)
	}
	a := transformer.AdamW{Batch: c.Batch, Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: c.LR, Clip: c.Clip}
	_, err = transformer.TrainAdamW(ctx, r, m, d.Train, d.Eval, a, progress, func(e train.EvalInfo) error {
		return r.Curve.Add(e.Step, e.TrainLoss/math.Ln2, e.ValLoss/math.Ln2)
	})
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
