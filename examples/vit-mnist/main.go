// Vit-mnist trains a small vision Transformer on MNIST, and on
// Fashion-MNIST when it is installed, once per MLP variant (GELU, ReLU,
// GEGLU by default) and seed, every variant from the same seed's batches,
// and checks the claim that GELU's test error is below ReLU's in a vision
// Transformer, with paired sign tests over seeds. Test error is plotted as
// the median with the min–max band over seeds.
//
// The model is behind one function, buildModel in model.go: today a
// stand-in without attention (7×7 patches, feed-forward blocks per patch,
// mean pooling), later nn.ViT. The flags already name the ViT's sizes.
//
//	go run ./examples/vit-mnist              # 2 data sets × 3 variants × 3 seeds: see report.md for the measured time
//	go run ./examples/vit-mnist -full        # 5 seeds, 4× the steps
//	go run ./examples/vit-mnist -data fashion -mlp gelu,relu,geglu,swiglu -seeds 5
//
// It writes to -out: <data>-<mlp>/seed<n>/ (the trainer's files),
// curves.csv, params.csv, results.csv, error.png, summary.json, claims.csv
// and report.md (prose from report.md.tmpl).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on.
type config struct {
	Out                             string
	Data, MLPs                      experiment.Strings
	DModel, Heads, Blocks, FF       int
	Batch, Steps, EvalEvery, Warmup int
	EvalN, TrainN, TestN, Seeds     int
	Workers, DPI                    int
	LR, Clip                        float64
	Seed                            uint64
	Full, Recompute, Quiet          bool
	Progress                        io.Writer // nil: os.Stderr
	Args                            []string  // the command line shown in report.md
	Load                            func(name string) (train, test *datasets.Dataset, err error)
}

func defaults() config {
	c := config{Data: experiment.Strings{"mnist"}, MLPs: experiment.Strings{"gelu", "relu", "geglu"},
		DModel: 48, Heads: 4, Blocks: 2, FF: 192, Batch: 64, Steps: 400, EvalEvery: 100, Warmup: 30, EvalN: 2000,
		LR: 2e-3, Clip: 1, DPI: 144, Args: os.Args}
	if _, err := os.Stat(datasets.FashionMNISTDir); err == nil {
		c.Data = append(c.Data, "fashion")
	}
	return c
}

// load reads a data set by its -data name.
func load(name string) (train, test *datasets.Dataset, err error) {
	switch name {
	case "mnist":
		return datasets.MNIST("")
	case "fashion":
		return datasets.FashionMNIST("")
	}
	return nil, nil, fmt.Errorf("-data %q: want mnist or fashion", name)
}

func main() {
	c := defaults()
	f := experiment.Flags{Out: "out/vit-mnist", Seed: 1, Seeds: 5, Workers: 2}
	f.Register(flag.CommandLine, experiment.SeedsFlag|experiment.SubsetFlag)
	flag.Var(&c.Data, "data", "comma-separated data sets: mnist, fashion (default: both when Fashion-MNIST is installed at "+datasets.FashionMNISTDir+")")
	flag.Var(&c.MLPs, "mlp", "comma-separated MLP variants: "+mlpNames())
	flag.IntVar(&c.DModel, "d-model", c.DModel, "model width")
	flag.IntVar(&c.Heads, "heads", c.Heads, "attention heads (must divide -d-model; unused by the stand-in model)")
	flag.IntVar(&c.Blocks, "blocks", c.Blocks, "Transformer blocks")
	flag.IntVar(&c.FF, "ff", c.FF, "inner width of an ungated MLP; gated ones get 2/3 of it (equal parameters)")
	flag.IntVar(&c.Batch, "batch", c.Batch, "images per step")
	flag.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps per run")
	flag.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "evaluate on -eval-n test images every this many steps")
	flag.IntVar(&c.EvalN, "eval-n", c.EvalN, "test images scored along the way (a seeded sample); the final error uses them all")
	flag.IntVar(&c.Warmup, "warmup", c.Warmup, "steps of linear warmup before the cosine decay")
	flag.Float64Var(&c.LR, "lr", c.LR, "peak learning rate of AdamW")
	flag.Float64Var(&c.Clip, "clip", c.Clip, "clip the global gradient norm to this; 0: off")
	flag.IntVar(&c.DPI, "dpi", c.DPI, "resolution of the PNG plots in dots per inch")
	flag.BoolVar(&c.Full, "full", false, "the longer run: 4× -steps, -eval-every and -warmup")
	flag.BoolVar(&c.Recompute, "recompute", false, "recompute block activations in the backward pass (less memory, more time)")
	flag.BoolVar(&c.Quiet, "quiet", false, "no progress output")
	flag.Parse()
	c.Out, c.Seed, c.Seeds, c.Workers, c.TrainN, c.TestN = f.Out, f.Seed, f.Seeds, f.Workers, f.TrainN, f.TestN
	if c.Full {
		c.Steps, c.EvalEvery, c.Warmup = 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "vit-mnist: unexpected arguments %q (flags only)\n", flag.Args())
		os.Exit(2)
	}
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "vit-mnist:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

func (c config) check() error {
	for _, m := range c.MLPs {
		if _, ok := mlpKinds[m]; !ok {
			return fmt.Errorf("-mlp %q: want a comma-separated list of %s", m, mlpNames())
		}
	}
	for _, d := range c.Data {
		if d != "mnist" && d != "fashion" {
			return fmt.Errorf("-data %q: want mnist or fashion", d)
		}
	}
	switch {
	case len(c.MLPs) == 0 || len(c.Data) == 0:
		return fmt.Errorf("-mlp %q -data %q: want at least one of each", c.MLPs.String(), c.Data.String())
	case len(c.MLPs) != len(uniq(c.MLPs)) || len(c.Data) != len(uniq(c.Data)):
		return fmt.Errorf("-mlp %s -data %s: a name is repeated", strings.Join(c.MLPs, ","), strings.Join(c.Data, ","))
	case c.DModel < 1 || c.Heads < 1 || c.Blocks < 0 || c.FF < 3:
		return fmt.Errorf("-d-model %d -heads %d -blocks %d -ff %d: want sizes ≥ 1, blocks ≥ 0, ff ≥ 3", c.DModel, c.Heads, c.Blocks, c.FF)
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case c.Batch < 1 || c.Steps < 1 || c.EvalEvery < 1 || c.Seeds < 1 || c.Workers < 1 || c.EvalN < 1 || c.Warmup < 0 || c.TrainN < 0 || c.TestN < 0 || c.DPI < 0:
		return fmt.Errorf("-batch %d -steps %d -eval-every %d -seeds %d -workers %d -eval-n %d -warmup %d -train-n %d -test-n %d -dpi %d: want the first six ≥ 1 and the rest ≥ 0",
			c.Batch, c.Steps, c.EvalEvery, c.Seeds, c.Workers, c.EvalN, c.Warmup, c.TrainN, c.TestN, c.DPI)
	case !(c.LR > 0 && c.LR*0.01 <= 1) || !(c.Clip >= 0):
		return fmt.Errorf("-lr %v -clip %v: want 0 < lr ≤ 100 and clip ≥ 0", c.LR, c.Clip)
	}
	return nil
}

func uniq(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}
