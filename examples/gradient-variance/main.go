// Gradient-variance checks the documents' gradient-variance and
// momentum-variance argument (shared/seeds/000) and writes to -out:
//
//	report.md        the command, the documents' claims with verdicts, tables, plots
//	summary.json     every reported number under a documented key
//	*.csv            the tables
//	*.png            f'(x)²φ(x); gradient variance during training; Var(m) against the prediction per block
//
// 1. E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1), every activation.
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
//	         ball, β = 0.9 and 0.99) fed the same gradients (package
//	         train/probe)
//	frozen   weights frozen after the windows, burn-in + -window batches
//	         drawn with replacement: independent gradients, same buffers
//
// The frozen phases satisfy the assumptions of the stationary formulas
// (independent, identically distributed gradients); the window shows how
// far they carry over to real training. Burn-in is the number of steps
// after which β^t ≤ -burn-eps for the largest β.
//
//	go run ./examples/gradient-variance              # defaults: 280 s of CPU time measured, ≈ 2.5 min on 2 free cores
//	go run ./examples/gradient-variance -acts relu,gelu,silu -window 6000
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

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
	TrainN                   int // MNIST training images used (0: all 60 000)
	TestN                    int // test images for the accuracy (0: all 10 000)
	Workers, DPI             int
	Quiet                    bool
	Args                     []string
}

func main() {
	var c config
	var acts, hidden, windowLRs string
	flag.StringVar(&c.Out, "out", "out/gradient-variance", "output folder; created if needed, the files this program writes are replaced")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the weights, the batch order and the batches drawn with replacement")
	flag.StringVar(&c.MNIST, "mnist", "", "directory with the MNIST IDX files (default: the GoMNIST module copy)")
	flag.StringVar(&acts, "acts", "relu,gelu", "activations, comma-separated (names as ops.ParseActivation takes them)")
	flag.StringVar(&hidden, "hidden", "128,128", "hidden layer widths, comma-separated")
	flag.IntVar(&c.Batch, "batch", 64, "mini-batch size")
	flag.Float64Var(&c.LR, "lr", 0.05, "learning rate of the training phase")
	flag.StringVar(&windowLRs, "window-lrs", "0.005,0.0005", "learning rates of the late windows, measured one after the other, comma-separated")
	flag.Float64Var(&c.Momentum, "momentum", 0.9, "momentum of the optimizer that trains (heavy ball, PyTorch's default)")
	flag.IntVar(&c.InitSamples, "init-samples", 1000, "gradient samples at the frozen initial weights")
	flag.IntVar(&c.TrainSteps, "train-steps", 1500, "training steps before the window")
	flag.IntVar(&c.Window, "window", 3000, "measured steps of the window and of the frozen phase (after burn-in)")
	flag.IntVar(&c.Blocks, "blocks", 6, "blocks the window is cut into for standard errors; must divide -window")
	flag.IntVar(&c.VarBlock, "var-block", 100, "training steps per gradient-variance point during training")
	flag.IntVar(&c.UnitBatches, "unit-batches", 50, "batches per phase over which the network's E[f'(z)²] is averaged")
	flag.Float64Var(&c.BurnEps, "burn-eps", 1e-4, "burn-in: skip the first t steps of each buffer, with β^t ≤ burn-eps")
	flag.IntVar(&c.TrainN, "train-n", 0, "use the first this many MNIST training images (0: all 60 000)")
	flag.IntVar(&c.TestN, "test-n", 0, "test images for the accuracy (0: all 10 000)")
	flag.IntVar(&c.Workers, "workers", runtime.NumCPU(), "activations measured in parallel (results do not depend on it)")
	flag.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots")
	flag.Parse()
	c.Args = os.Args
	err := parseLists(&c, acts, hidden, windowLRs)
	if err == nil {
		_, err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gradient-variance:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

// measured collects the numbers the claims refer to, by summary key.
type measured map[string]float64

// results is what the tests check besides the files.
type results struct {
	Acts []*actResult
}

func run(c config) (*results, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Gradient variance and momentum variance", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	m := measured{}
	if err := derivStats(r, c, m); err != nil {
		return nil, err
	}
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	acts, err := measureAll(c, d)
	if err != nil {
		return nil, err
	}
	if err := momentumReport(r, c, acts, m); err != nil {
		return nil, err
	}
	if err := gradientReport(r, c, acts, m); err != nil {
		return nil, err
	}
	if err := claims(r, c, m, acts); err != nil {
		return nil, err
	}
	describe(r)
	return &results{Acts: acts}, r.Close()
}
