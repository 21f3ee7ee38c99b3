// Gradient-variance checks the documents' gradient-variance and
// momentum-variance argument (shared/seeds/000) and writes to -out:
//
//	report.md        the command, the documents' claims with verdicts, tables, plots
//	summary.json     every reported number under a documented key
//	*.csv            the tables
//	*.png            f'(x)²φ(x); gradient variance during training; Var(m) against the prediction per block
//
// 1. E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1), every activation
// (ops.Activation.Profile).
//
// 2. For each of -acts, an MLP on MNIST (784 → -hidden → 10, float32,
// SGD with heavy-ball momentum -momentum) is measured in four phases:
//
//	init     weights frozen at the initialization (the same for every
//	         activation), -init-samples batches drawn with replacement:
//	         per-parameter gradient mean and variance
//	train    -train-steps steps at -lr: Σ_j Var(g_j) in blocks of -var-block steps
//	window   burn-in + -window steps at each of -window-lrs in turn:
//	         gradients and four shadow momentum buffers (EMA and heavy
//	         ball, β = 0.9 and 0.99) fed the same gradients (probe.Watch)
//	frozen   weights frozen after the windows, burn-in + -window batches
//	         drawn with replacement: independent gradients, same buffers
//
// The frozen phases satisfy the assumptions of the stationary formulas
// (independent, identically distributed gradients); the window shows how
// far they carry over to real training. Burn-in is the number of steps
// after which β^t ≤ -burn-eps for the largest β.
//
//	go run ./examples/gradient-variance              # defaults: about 2 min on 2 free cores
//	go run ./examples/gradient-variance -acts relu,gelu,silu -window 6000
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives identical
// files.
type config struct {
	Out, MNIST               string
	Seed                     uint64
	Acts                     []ops.Activation
	Hidden                   []int
	Batch                    int
	LR, Momentum             float64
	WindowLRs                []float64
	InitSamples, TrainSteps  int
	Window, Blocks, VarBlock int
	UnitBatches              int // batches per phase whose pre-activations give the network's E[f'(z)²]
	BurnEps                  float64
	TrainN, TestN            int // MNIST images used (0: all 60 000 and 10 000)
	Workers, DPI             int
	Quiet                    bool
	Args                     []string
}

func main() {
	c, err := parseFlags(os.Args)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		// Each worker trains a 128-wide MLP, whose matrix products are
		// faster on one BLAS thread; the workers keep the cores busy. (The
		// pure-Go BLAS has no thread setting; that error is not worth stopping for.)
		_ = ops.SetBLASThreads(1)
		_, err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gradient-variance:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

// parseFlags reads the command line (argv as os.Args holds it).
func parseFlags(argv []string) (config, error) {
	c := config{Hidden: []int{128, 128}, WindowLRs: []float64{0.005, 0.0005}, Args: argv}
	c.Acts, _ = ops.ParseActivations("relu,gelu")
	fs := flag.NewFlagSet(argv[0], flag.ContinueOnError)
	fs.StringVar(&c.Out, "out", "out/gradient-variance", "output folder; created if needed, the files this program writes are replaced")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the weights, the batch order and the batches drawn with replacement")
	fs.StringVar(&c.MNIST, "mnist", "", "directory with the MNIST IDX files (default: the GoMNIST module copy)")
	fs.Func("acts", "activations, comma-separated, as ops.ParseActivations takes them (default relu,gelu)",
		func(s string) (err error) { c.Acts, err = ops.ParseActivations(s); return err })
	fs.Func("hidden", "hidden layer widths, comma-separated (default 128,128)", func(s string) (err error) { c.Hidden, err = list(s, strconv.Atoi); return err })
	fs.IntVar(&c.Batch, "batch", 64, "mini-batch size")
	fs.Float64Var(&c.LR, "lr", 0.05, "learning rate of the training phase")
	fs.Func("window-lrs", "learning rates of the late windows, measured one after the other, comma-separated (default 0.005,0.0005)",
		func(s string) (err error) {
			c.WindowLRs, err = list(s, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
			return err
		})
	fs.Float64Var(&c.Momentum, "momentum", 0.9, "momentum of the optimizer that trains (heavy ball, PyTorch's default)")
	fs.IntVar(&c.InitSamples, "init-samples", 1000, "gradient samples at the frozen initial weights")
	fs.IntVar(&c.TrainSteps, "train-steps", 1500, "training steps before the window")
	fs.IntVar(&c.Window, "window", 3000, "measured steps of the window and of the frozen phase (after burn-in)")
	fs.IntVar(&c.Blocks, "blocks", 6, "blocks the window is cut into for standard errors; must divide -window")
	fs.IntVar(&c.VarBlock, "var-block", 100, "training steps per gradient-variance point during training")
	fs.IntVar(&c.UnitBatches, "unit-batches", 50, "batches per phase over which the network's E[f'(z)²] is averaged")
	fs.Float64Var(&c.BurnEps, "burn-eps", 1e-4, "burn-in: skip the first t steps of each buffer, with β^t ≤ burn-eps")
	fs.IntVar(&c.TrainN, "train-n", 0, "use the first this many MNIST training images (0: all 60 000)")
	fs.IntVar(&c.TestN, "test-n", 0, "test images for the accuracy (0: all 10 000)")
	fs.IntVar(&c.Workers, "workers", runtime.NumCPU(), "activations measured in parallel (results do not depend on it)")
	fs.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots")
	return c, fs.Parse(argv[1:])
}

// list parses a comma-separated list.
func list[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (c config) validate() error {
	switch {
	case len(c.Acts) == 0 || len(c.Hidden) == 0 || len(c.WindowLRs) == 0 || c.Batch < 1 || c.InitSamples < 2 || c.TrainSteps < 0 ||
		c.Window < 2 || c.Blocks < 2 || c.Window%c.Blocks != 0 || c.VarBlock < 2 || c.UnitBatches < 1 || c.Workers < 1 || c.TrainN < 0 || c.TestN < 0:
		return fmt.Errorf("-acts %v -hidden %v -window-lrs %v -batch %d -init-samples %d -train-steps %d -window %d -blocks %d -var-block %d "+
			"-unit-batches %d -workers %d -train-n %d -test-n %d: want non-empty lists, positive sizes, at least 2 blocks dividing the window, "+
			"at least 2 samples and steps per block", c.Acts, c.Hidden, c.WindowLRs, c.Batch, c.InitSamples, c.TrainSteps, c.Window, c.Blocks,
			c.VarBlock, c.UnitBatches, c.Workers, c.TrainN, c.TestN)
	case !(c.LR >= 0) || !(c.Momentum >= 0 && c.Momentum < 1) || !(c.BurnEps > 0 && c.BurnEps < 1) || slices.Min(c.Hidden) <= 0 || !(slices.Min(c.WindowLRs) >= 0):
		return fmt.Errorf("-lr %v -momentum %v -burn-eps %v -hidden %v -window-lrs %v: want learning rates ≥ 0, momentum in [0, 1), "+
			"burn-eps in (0, 1), positive widths", c.LR, c.Momentum, c.BurnEps, c.Hidden, c.WindowLRs)
	}
	return nil
}

func run(c config) ([]*actResult, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Gradient variance and momentum variance", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	if err := derivStats(r, c); err != nil {
		return nil, err
	}
	acts, err := measureAll(c)
	if err == nil {
		err = momentumReport(r, c, acts)
	}
	if err == nil {
		err = gradientReport(r, c, acts)
	}
	if err != nil {
		return nil, err
	}
	for _, cl := range claims(r, acts) {
		r.Claim(cl)
	}
	describe(r)
	return acts, r.Close()
}
