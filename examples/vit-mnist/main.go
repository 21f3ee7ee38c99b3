// Vit-mnist trains a small vision Transformer on MNIST, and on
// Fashion-MNIST when it is installed, once per MLP variant (GELU, ReLU,
// GEGLU by default) and seed, every variant from the same seed's batches,
// and checks the claim that GELU's test error is below ReLU's in a vision
// Transformer, with paired sign tests over seeds. Test error is plotted as
// the median with the min–max band over seeds.
//
// The model is nn.ViT: 16 patches of 7×7 pixels, a [CLS] token, learned
// positions, pre-LN encoder blocks (non-causal self-attention and the MLP
// of -mlp, transformer.MLPs) and a classifier head on [CLS], sized by
// -d-model, -heads, -blocks and -ff.
//
//	go run ./examples/vit-mnist              # 2 data sets × 3 variants × 5 seeds: under a minute*
//	go run ./examples/vit-mnist -full        # 4× the steps
//	go run ./examples/vit-mnist -data fashion -mlp gelu,relu,geglu,swiglu -seeds 8
//
// *timing.csv has each run's wall time on this machine.
//
// It writes to -out: <data>-<mlp>/seed<n>/ (the trainer's files),
// curves.csv, params.csv, results.csv, error.png, summary.json, claims.csv,
// report.md (prose from report.md.tmpl) and timing.csv (the wall times:
// the one file that differs between two runs of the same command).
//
// This file reads top to bottom: the configuration, data, model,
// optimizer and training loop (transformer.TrainAdamW), the final test
// error; report.go writes the results. Per data set and seed, every MLP
// variant sees the same batches in the same order.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"io"
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
// experiment.CheckFlags; experiment.Flags are the shared ones. The help
// of -data and -mlp spells out datasets.FashionMNISTDir and
// transformer.MLPNames() (a tag is a constant; a test checks them).
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers, -train-n, -test-n

	Data      experiment.Strings `flag:"data" help:"comma-separated data sets: mnist, fashion (default: both when Fashion-MNIST is installed at /usr/share/datasets/fashion-mnist)"`
	MLPs      experiment.Strings `flag:"mlp" help:"comma-separated MLP variants: geglu, gelu, gelu_tanh, reglu, relu, silu, swiglu"`
	DModel    int                `flag:"d-model" help:"model width" check:"min=1"`
	Heads     int                `flag:"heads" help:"attention heads; must divide -d-model" check:"min=1"`
	Blocks    int                `flag:"blocks" help:"Transformer blocks" check:"min=1"`
	FF        int                `flag:"ff" help:"inner width of an ungated MLP; gated ones get 2/3 of it (equal parameters)" check:"min=3"`
	Batch     int                `flag:"batch" help:"images per step" check:"min=1"`
	Steps     int                `flag:"steps" help:"optimizer steps per run" check:"min=1"`
	EvalEvery int                `flag:"eval-every" help:"evaluate on -eval-n test images every this many steps" check:"min=1"`
	EvalN     int                `flag:"eval-n" help:"test images scored along the way (a seeded sample); the final error uses them all" check:"min=1"`
	Warmup    int                `flag:"warmup" help:"steps of linear warmup before the cosine decay" check:"min=0"`
	LR        float64            `flag:"lr" help:"peak learning rate of AdamW"`
	Clip      float64            `flag:"clip" help:"clip the global gradient norm to this; 0: off"`
	DPI       int                `flag:"dpi" help:"resolution of the plot in dots per inch" check:"min=0"`
	Full      bool               `flag:"full" help:"the longer run: 4× -steps, -eval-every and -warmup"`
	Quiet     bool               `flag:"quiet" help:"no progress output"`

	Progress io.Writer // nil: os.Stderr
	Args     []string  // the command line shown in report.md
}

// defaults: sized so that 2 data sets × 3 variants × 5 seeds train in
// under 10 minutes on 2 busy cores. The learning rate was the best of
// 2e-3, 4e-3 and 8e-3 for GELU on MNIST, seed 1 (test error 23%, 15%, 20%).
func defaults() config {
	c := config{Flags: experiment.Flags{Out: "out/vit-mnist", Seed: 1, Seeds: 5, Workers: 2},
		Data: experiment.Strings{"mnist"}, MLPs: experiment.Strings{"gelu", "relu", "geglu"},
		DModel: 32, Heads: 4, Blocks: 2, FF: 128, Batch: 32, Steps: 300, EvalEvery: 100, EvalN: 1000, Warmup: 30, LR: 4e-3, Clip: 1,
		DPI: 144, Args: os.Args}
	if _, err := os.Stat(datasets.FashionMNISTDir); err == nil {
		c.Data = append(c.Data, "fashion")
	}
	return c
}

func parseFlags() (config, error) {
	c := defaults()
	c.Flags.Register(flag.CommandLine, experiment.SeedsFlag|experiment.SubsetFlag)
	if err := experiment.BindFlags(flag.CommandLine, &c); err != nil {
		return c, err
	}
	experiment.ParseCommandLine("vit-mnist")
	if c.Full {
		c.Steps, c.EvalEvery, c.Warmup = 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
	}
	return c, nil
}

// adamW is the training recipe of c's flags.
func (c config) adamW() transformer.AdamW {
	return transformer.AdamW{Batch: c.Batch, Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: c.LR, Clip: c.Clip}
}

var dataNames = map[string]string{"mnist": "MNIST", "fashion": "Fashion-MNIST"}

func (c config) check() error {
	mlp := func(m string) bool { _, ok := transformer.MLPs[m]; return ok }
	if err := cmp.Or(experiment.CheckNames("mlp", c.MLPs, mlp, transformer.MLPNames()),
		experiment.CheckNames("data", c.Data, func(d string) bool { return dataNames[d] != "" }, "mnist, fashion"),
		experiment.CheckFlags(c), c.Flags.Check(experiment.SeedsFlag|experiment.SubsetFlag)); err != nil {
		return err
	}
	switch {
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case !(c.LR > 0 && c.LR <= 100) || !(c.Clip >= 0):
		return fmt.Errorf("-lr %v -clip %v: want 0 < lr ≤ 100 (AdamW's decay needs lr·0.01 ≤ 1) and clip ≥ 0", c.LR, c.Clip)
	}
	return nil
}

func main() {
	c, err := parseFlags()
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		_, err = run(ctx, c)
		stop()
	}
	experiment.Exit("vit-mnist", c.Out, err)
}

// setting is one cell of the grid.
type setting struct{ Data, MLP string }

func (s setting) String() string { return s.Data + "-" + s.MLP }

type runResult = experiment.Run[setting]

// data is one data set: the training images, the test images scored along
// the way (Eval) and all of them (Test).
type data struct {
	Name              string
	Train, Eval, Test *datasets.Dataset
}

// results is what run returns besides the files.
type results struct {
	Data map[string]data
	Runs []*runResult // seeds outermost, then -data, then -mlp order
}

func loadData(c config, name string) (d data, err error) {
	tr, te, err := experiment.MNIST("")
	if name == "fashion" {
		tr, te, err = datasets.FashionMNIST("")
	}
	if err != nil {
		return d, fmt.Errorf("-data %s: %w", name, err)
	}
	if d.Train, d.Test, err = c.Subsets(tr, te); err != nil {
		return d, err
	}
	if d.Train.Len() < c.Batch {
		return d, fmt.Errorf("-train-n %d: fewer training images than one batch of %d", d.Train.Len(), c.Batch)
	}
	d.Name, d.Eval = dataNames[name], d.Test
	if c.EvalN < d.Test.Len() {
		d.Eval, err = experiment.Subset(d.Test, c.EvalN, c.Seed, "eval")
	}
	return d, err
}

const (
	side    = 28           // image side in pixels
	patch   = 7            // patch side in pixels
	grid    = side / patch // patches per side
	tokens  = grid * grid  // patches per image
	classes = 10
)

// vit is Dosovitskiy et al.'s encoder for 28×28 images in 16 patches of
// 7×7, no dropout, with the MLP mlp.
func (c config) vit(mlp string) nn.ViTConfig {
	cfg := nn.ViTConfig{ImageSize: side, PatchSize: patch, Dim: c.DModel, Heads: c.Heads, Layers: c.Blocks, Classes: classes}
	cfg.Hidden, cfg.Activation, cfg.Gate = transformer.MLPs[mlp].Block(c.FF)
	return cfg
}

func run(ctx context.Context, c config) (*results, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	res := &results{Data: map[string]data{}}
	var settings []setting
	for _, name := range c.Data {
		d, err := loadData(c, name)
		if err != nil {
			return nil, err
		}
		res.Data[name] = d
		for _, m := range c.MLPs {
			settings = append(settings, setting{name, m})
		}
	}
	grid := experiment.NewGrid(c.Flags, settings, setting.String, "train_loss", "test_error")
	var progress io.Writer
	grid.Progress, progress = c.Flags.Progress(c.Quiet, c.Progress)
	var err error
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainOne(ctx, c, res.Data[r.Setting.Data], progress, r) }); err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

// trainOne trains the ViT of the run's MLP as run r: AdamW, warmup and
// cosine decay (transformer.AdamW), then scores it on the whole test set.
func trainOne(ctx context.Context, c config, d data, progress io.Writer, r *runResult) error {
	m, err := transformer.ViTModel(c.vit(r.Setting.MLP), c.Batch, r.Seed)
	if err != nil {
		return err
	}
	t, err := transformer.TrainAdamW(ctx, r, m, d.Train, d.Eval, c.adamW(), progress, func(e train.EvalInfo) error {
		return r.Curve.Add(e.Step, e.TrainLoss, 1-e.ValAccuracy)
	})
	if err != nil || r.Diverged != "" { // a diverged model has no test error (Group.Value: NaN)
		return err
	}
	test, err := datasets.NewLoader(d.Test, datasets.LoaderConfig{BatchSize: c.Batch})
	if err != nil {
		return err
	}
	e, err := t.Evaluate(test)
	if err != nil {
		return err
	}
	r.Values["final_test_error"] = 1 - e.Accuracy
	return nil
}
