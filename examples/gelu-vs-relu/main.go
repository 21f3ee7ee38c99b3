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
//	runs/<opt>/lr<rate>/<act>/seed<n>/   each run: the trainer's steps.csv and evals.csv, curve.csv, model.safetensors
//	timing.csv        wall-clock time of each run (the one file that differs between reruns)
//
// Run it from the module root:
//
//	go run ./examples/gelu-vs-relu                  # default: 3 epochs × 5 seeds, 50 runs, about 4 minutes on 2 cores
//	go run ./examples/gelu-vs-relu -full -resume    # the paper's 50 epochs × 5 seeds
//	go run ./examples/gelu-vs-relu -dropout 0.5     # the paper's second panel
//	go run ./examples/gelu-vs-relu -opts adam -adam-lr 1e-3,1e-4,1e-5   # the paper's learning-rate tuning
//
// Five seeds is the fewest with which the one-sided sign test behind the
// verdicts can reach p < 0.05 (when all five agree). -full is 50/3 times the
// default's work, about 70 minutes; -resume continues run by run after an
// interruption. timing.csv has each run's time, BenchmarkTrainStep the
// step alone.
//
// Seeds are paired: seed s gives every activation and optimizer the same
// initial weights and the same order of batches. run.go trains the runs
// (package train/experiment keeps them, resumes and aggregates them),
// report.go computes what report.md shows and report.md.tmpl says it (the
// summary keys are described in keys.txt), claims.go checks the paper's and
// the documents' claims.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/gemm"
	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on; the same config gives
// byte-identical output (except timing.csv) on one machine and BLAS.
type config struct {
	Out               string
	Epochs, Seeds     int
	Seed              uint64 // seeds are Seed, Seed+1, …
	Acts              experiment.Activations
	Opts              experiment.Strings // "adam", "sgd"
	AdamLR, SGDLR     experiment.Floats  // several values: chosen per activation on the validation set
	Momentum, Dropout float64
	Val               int // training examples held out for validation
	EvalsPerEpoch     int
	Layers, Width     int
	Batch             int
	NTrain, NTest     int // use only this many examples (0: all)
	Workers, DPI      int
	Resume, Quiet     bool
	Args              []string  // the command line shown in report.md
	Progress          io.Writer // progress lines (default os.Stderr)
}

func main() {
	c := config{Args: os.Args, Acts: experiment.Activations{activation.ReLU, activation.GELU, activation.GELUTanh, activation.ELU, activation.SiLU},
		Opts: experiment.Strings{"adam", "sgd"}, AdamLR: experiment.Floats{1e-3}, SGDLR: experiment.Floats{0.05}}
	var full bool
	flag.StringVar(&c.Out, "out", "out/gelu-vs-relu", "output folder; created if needed, the files this program writes are replaced")
	flag.IntVar(&c.Epochs, "epochs", 3, "passes over the training set per run (the paper: 50)")
	flag.IntVar(&c.Seeds, "seeds", 5, "runs per activation and optimizer, with seeds -seed, -seed+1, … (the paper: 5)")
	flag.Uint64Var(&c.Seed, "seed", 1, "first seed; a seed fixes the initial weights, the batch order and the dropout masks")
	flag.BoolVar(&full, "full", false, "the paper's length: 50 epochs × 5 seeds (-epochs and -seeds given explicitly still win)")
	flag.Var(&c.Acts, "acts", "comma-separated activations, as activation.ParseActivation names them")
	flag.Var(&c.Opts, "opts", "comma-separated optimizers: adam, sgd (SGD with momentum)")
	flag.Var(&c.AdamLR, "adam-lr", "Adam learning rate; a comma-separated list is tuned on the validation set")
	flag.Var(&c.SGDLR, "sgd-lr", "SGD learning rate; a comma-separated list is tuned on the validation set")
	flag.Float64Var(&c.Momentum, "momentum", 0.9, "SGD momentum (heavy ball, PyTorch's convention)")
	flag.Float64Var(&c.Dropout, "dropout", 0, "dropout rate after every hidden activation (the paper: 0 and 0.5)")
	flag.IntVar(&c.Val, "val", 5000, "training examples held out as a validation set, for the learning-rate choice (the paper: 5000)")
	flag.IntVar(&c.EvalsPerEpoch, "evals-per-epoch", 3, "evaluations of the test and validation sets per epoch (the paper: 3)")
	flag.IntVar(&c.Layers, "layers", 8, "hidden layers")
	flag.IntVar(&c.Width, "width", 128, "units per hidden layer")
	flag.IntVar(&c.Batch, "batch", 128, "mini-batch size")
	flag.IntVar(&c.NTrain, "n-train", 0, "use a seeded subset of this many MNIST training images, for quick trials (0: all 60000)")
	flag.IntVar(&c.NTest, "n-test", 0, "use a seeded subset of this many test images (0: all 10000)")
	flag.IntVar(&c.Workers, "workers", runtime.NumCPU(), "runs trained at once, each on one BLAS thread (results do not depend on it)")
	flag.BoolVar(&c.Resume, "resume", false, "reuse finished runs found in -out whose settings match, instead of training them again")
	flag.BoolVar(&c.Quiet, "quiet", false, "print nothing but errors and the final line")
	flag.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots in dots per inch")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if full && !set["epochs"] {
		c.Epochs = 50
	}
	if full && !set["seeds"] {
		c.Seeds = 5
	}
	// A 128-wide network's products run faster on one BLAS thread, and
	// two runs at a time then use both cores; the thread count must not
	// depend on -workers, since OpenBLAS's last bits depend on it.
	gemm.SetThreads(1)
	err := fmt.Errorf("unexpected arguments %q (all settings are flags; see -h)", flag.Args())
	var res *results
	if flag.NArg() == 0 {
		res, err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gelu-vs-relu:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s/report.md (%d runs, %s)\n", c.Out, len(res.Runs), res.Elapsed)
}

func (c config) validate() error {
	bad := fmt.Errorf
	switch {
	case c.Epochs < 1 || c.Seeds < 1:
		return bad("-epochs %d -seeds %d: want both ≥ 1", c.Epochs, c.Seeds)
	case c.Layers < 1 || c.Width < 1 || c.Batch < 1 || c.EvalsPerEpoch < 1 || c.Workers < 1:
		return bad("-layers %d -width %d -batch %d -evals-per-epoch %d -workers %d: want all ≥ 1", c.Layers, c.Width, c.Batch, c.EvalsPerEpoch, c.Workers)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return bad("-dropout %v: want 0 ≤ dropout < 1", c.Dropout)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return bad("-momentum %v: want 0 ≤ momentum < 1", c.Momentum)
	case c.Val < 0 || c.NTrain < 0 || c.NTest < 0 || c.DPI < 0:
		return bad("-val %d -n-train %d -n-test %d -dpi %d: want none negative", c.Val, c.NTrain, c.NTest, c.DPI)
	case len(c.Acts) == 0 || len(c.Opts) == 0:
		return bad("no activations or no optimizers given")
	case c.Out == "":
		return bad("-out is empty")
	}
	for _, o := range c.Opts {
		if o != "adam" && o != "sgd" {
			return bad("-opts: unknown optimizer %q, want adam or sgd", o)
		}
		for _, lr := range c.lrs(o) {
			if !(lr > 0) {
				return bad("-%s-lr %v: want positive learning rates", o, lr)
			}
		}
		if len(c.lrs(o)) > 1 && c.Val == 0 {
			return bad("-%s-lr lists %d learning rates: choosing one needs a validation set, but -val is 0", o, len(c.lrs(o)))
		}
	}
	return nil
}
