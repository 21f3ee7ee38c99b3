// Gelu-vs-relu trains the GELU paper's MNIST classifier (Hendrycks & Gimpel
// 2016, §3.1: eight hidden layers of 128 units, batch 128, Adam, weights
// with unit-norm rows, biases 0, optional dropout) with ReLU, GELU (exact
// and tanh form), ELU and SiLU, with Adam and with SGD + momentum, over
// several seeds, and compares training loss and test error per epoch. It
// writes to -out:
//
//	report.md         the command, the claims with verdicts, the setup, tables, plots
//	summary.json      every reported number under a documented key
//	curves.csv        per activation, optimizer and evaluation: median/min/max over seeds
//	*.png             training loss and test error against epochs, one plot per optimizer
//	runs/<opt>/lr<rate>/<act>/seed<n>/   each run: the trainer's steps.csv and evals.csv, points.csv, model.safetensors
//	timing.csv        wall-clock time of each run (the one file that differs between reruns)
//
// Run it from the module root:
//
//	go run ./examples/gelu-vs-relu                  # default: 1 epoch × 2 seeds, 20 runs
//	go run ./examples/gelu-vs-relu -full -resume    # the paper's 50 epochs × 5 seeds, 50 runs
//
// On the project's 2-core machine, shared with other jobs (load average
// 7–9), the default took 7 min 45 s (2026-11-21); -full is 125 times that
// work, some 16 hours, and -resume lets it continue run by run after an
// interruption. Exact GELU and its tanh form train about 5 times slower per
// step than ReLU here (their activation kernels dominate the step);
// timing.csv has each run's time, BenchmarkTrainStep the step alone.
//
//	go run ./examples/gelu-vs-relu -dropout 0.5     # the paper's second panel
//	go run ./examples/gelu-vs-relu -opts adam -adam-lr 1e-3,1e-4,1e-5   # the paper's learning-rate tuning
//
// Seeds are paired: seed s gives every activation and optimizer the same
// initial weights and the same order of batches. The code: experiment.go
// runs everything, runs.go trains one run, eval.go scores the validation
// set, groups.go aggregates over seeds, report.go and initscale.go write
// report.md, claims.go checks the paper's and the documents' claims, and
// keys.go documents summary.json.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/geluproject/gelu/ops"
)

// config is everything a run depends on; the same config gives
// byte-identical output (except timing.csv) on one machine and BLAS.
type config struct {
	Out           string
	Epochs, Seeds int
	Seed          uint64 // seeds are Seed, Seed+1, …
	Acts          []ops.Activation
	Opts          []string  // "adam", "sgd"
	AdamLR, SGDLR []float64 // several values: chosen per activation on the validation set
	Momentum      float64
	Dropout       float64
	Val           int // training examples held out for validation
	EvalsPerEpoch int
	Layers, Width int
	Batch         int
	NTrain, NTest int // use only this many examples (0: all)
	Resume, Quiet bool
	DPI           int
	Args          []string  // the command line shown in report.md
	Progress      io.Writer // progress lines (default os.Stderr)
}

func main() {
	c := config{Args: os.Args}
	var acts, opts, adamLR, sgdLR string
	var full bool
	flag.StringVar(&c.Out, "out", "out/gelu-vs-relu", "output folder; created if needed, the files this program writes are replaced")
	flag.IntVar(&c.Epochs, "epochs", 1, "passes over the training set per run (the paper: 50)")
	flag.IntVar(&c.Seeds, "seeds", 2, "runs per activation and optimizer, with seeds -seed, -seed+1, … (the paper: 5)")
	flag.Uint64Var(&c.Seed, "seed", 1, "first seed; a seed fixes the initial weights, the batch order and the dropout masks")
	flag.BoolVar(&full, "full", false, "the paper's length: 50 epochs × 5 seeds (-epochs and -seeds given explicitly still win)")
	flag.StringVar(&acts, "acts", "relu,gelu,gelu_tanh,elu,silu", "comma-separated activations, as ops.ParseActivation names them")
	flag.StringVar(&opts, "opts", "adam,sgd", "comma-separated optimizers: adam, sgd (SGD with momentum)")
	flag.StringVar(&adamLR, "adam-lr", "1e-3", "Adam learning rate; a comma-separated list is tuned on the validation set")
	flag.StringVar(&sgdLR, "sgd-lr", "0.05", "SGD learning rate; a comma-separated list is tuned on the validation set")
	flag.Float64Var(&c.Momentum, "momentum", 0.9, "SGD momentum (heavy ball, PyTorch's convention)")
	flag.Float64Var(&c.Dropout, "dropout", 0, "dropout rate after every hidden activation (the paper: 0 and 0.5)")
	flag.IntVar(&c.Val, "val", 5000, "training examples held out as a validation set, for the learning-rate choice (the paper: 5000)")
	flag.IntVar(&c.EvalsPerEpoch, "evals-per-epoch", 3, "evaluations of the test and validation sets per epoch (the paper: 3)")
	flag.IntVar(&c.Layers, "layers", 8, "hidden layers")
	flag.IntVar(&c.Width, "width", 128, "units per hidden layer")
	flag.IntVar(&c.Batch, "batch", 128, "mini-batch size")
	flag.IntVar(&c.NTrain, "n-train", 0, "use a seeded subset of this many MNIST training images, for quick trials (0: all 60000)")
	flag.IntVar(&c.NTest, "n-test", 0, "use a seeded subset of this many test images (0: all 10000)")
	flag.BoolVar(&c.Resume, "resume", false, "reuse finished runs found in -out whose settings match, instead of training them again")
	flag.BoolVar(&c.Quiet, "quiet", false, "print nothing but errors and the final line")
	flag.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots in dots per inch")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q (all settings are flags; see -h)", flag.Args()))
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if full && !set["epochs"] {
		c.Epochs = 50
	}
	if full && !set["seeds"] {
		c.Seeds = 5
	}
	var err error
	if c.Acts, err = parseActs(acts); err != nil {
		fail(err)
	}
	c.Opts = splitList(opts)
	if c.AdamLR, err = parseFloats("-adam-lr", adamLR); err != nil {
		fail(err)
	}
	if c.SGDLR, err = parseFloats("-sgd-lr", sgdLR); err != nil {
		fail(err)
	}
	res, err := run(c)
	if err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s/report.md (%d runs, %s)\n", c.Out, len(res.Runs), res.Elapsed)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gelu-vs-relu:", err)
	os.Exit(1)
}
