// Gradient-variance checks the documents' gradient-variance and
// momentum-variance argument (shared/seeds/000) and writes to -out:
//
//	report.md        the command, the documents' claims with verdicts, tables, plots
//	summary.json     every reported number under a documented key
//	*.csv            the tables
//	*.png            f'(x)²φ(x); gradient variance during training; Var(m) against the prediction per block
//
// 1. E[f'(X)], E[f'(X)²] and Var[f'(X)] for X ~ N(0, 1), every activation
// (analysis.ProfileOf).
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
	_ "embed"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"text/template"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives identical
// files. -seed is the seed of the weights, the batch order, the batches
// drawn with replacement and the -train-n/-test-n subsets; -workers is how
// many activations are measured at once, one BLAS thread each.
type config struct {
	experiment.Flags                        // -out, -seed, -workers, -train-n, -test-n
	MNIST            string                 `flag:"mnist" help:"directory with the MNIST IDX files (default: the GoMNIST module copy)"`
	Acts             experiment.Activations `flag:"acts" help:"activations, comma-separated, as activation.ParseActivation takes them"`
	Hidden           experiment.Ints        `flag:"hidden" help:"hidden layer widths, comma-separated"`
	Batch            int                    `flag:"batch" help:"mini-batch size"`
	LR               float64                `flag:"lr" help:"learning rate of the training phase"`
	WindowLRs        experiment.Floats      `flag:"window-lrs" help:"learning rates of the late windows, measured one after the other, comma-separated"`
	Momentum         float64                `flag:"momentum" help:"momentum of the optimizer that trains (heavy ball, PyTorch's default)"`
	InitSamples      int                    `flag:"init-samples" help:"gradient samples at the frozen initial weights"`
	TrainSteps       int                    `flag:"train-steps" help:"training steps before the window"`
	Window           int                    `flag:"window" help:"measured steps of the window and of the frozen phase (after burn-in)"`
	Blocks           int                    `flag:"blocks" help:"blocks the window is cut into for standard errors; must divide -window"`
	VarBlock         int                    `flag:"var-block" help:"training steps per gradient-variance point during training"`
	UnitBatches      int                    `flag:"unit-batches" help:"batches per phase over which the network's E[f'(z)²] is averaged"`
	BurnEps          float64                `flag:"burn-eps" help:"burn-in: skip the first t steps of each buffer, with β^t ≤ burn-eps"`
	DPI              int                    `flag:"dpi" help:"resolution of the PNG plots"`
	Quiet            bool                   // no progress lines on stderr
	Args             []string               // the command line shown in report.md
}

func main() {
	c := config{Flags: experiment.Flags{Out: "out/gradient-variance", Seed: 1, Workers: runtime.NumCPU()}, Args: os.Args,
		Acts: experiment.Activations{activation.ReLU, activation.GELU}, Hidden: experiment.Ints{128, 128}, Batch: 64, LR: 0.05,
		WindowLRs: experiment.Floats{0.005, 0.0005}, Momentum: 0.9, InitSamples: 1000, TrainSteps: 1500, Window: 3000, Blocks: 6,
		VarBlock: 100, UnitBatches: 50, BurnEps: 1e-4, DPI: 144}
	c.Flags.Register(flag.CommandLine, experiment.SubsetFlag)
	if err := experiment.BindFlags(flag.CommandLine, &c); err != nil {
		experiment.Exit("gradient-variance", c.Out, err)
	}
	flag.Parse()
	_, err := run(c)
	experiment.Exit("gradient-variance", c.Out, err)
}

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

func (c config) validate() error {
	if len(c.Acts) == 0 || len(c.Hidden) == 0 || len(c.WindowLRs) == 0 || slices.Min(c.Hidden) <= 0 || !(slices.Min(c.WindowLRs) >= 0) ||
		c.Batch < 1 || !(c.LR >= 0) || !(c.Momentum >= 0 && c.Momentum < 1) || c.InitSamples < 2 || c.TrainSteps < 0 || c.Window < 2 ||
		c.Blocks < 2 || c.Window%c.Blocks != 0 || c.VarBlock < 2 || c.UnitBatches < 1 || !(c.BurnEps > 0 && c.BurnEps < 1) ||
		c.TrainN < 0 || c.TestN < 0 || c.Workers < 1 {
		return fmt.Errorf("-acts %v -hidden %v -window-lrs %v -batch %d -lr %v -momentum %v -init-samples %d -train-steps %d -window %d "+
			"-blocks %d -var-block %d -unit-batches %d -burn-eps %v -train-n %d -test-n %d -workers %d: want non-empty lists, positive widths "+
			"and sizes, learning rates ≥ 0, momentum in [0, 1), at least 2 samples per phase and block, blocks dividing the window, burn-eps in (0, 1)",
			c.Acts, c.Hidden, c.WindowLRs, c.Batch, c.LR, c.Momentum, c.InitSamples, c.TrainSteps, c.Window, c.Blocks, c.VarBlock, c.UnitBatches,
			c.BurnEps, c.TrainN, c.TestN, c.Workers)
	}
	return nil
}

// run is the whole program: section 1, the measurements of sections 2 and
// 3, the claims, then report.md.
func run(c config) (acts []*actResult, err error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Gradient variance and momentum variance", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	pg := &page{config: c, R: r}
	if err := derivStats(r, pg); err != nil { // 1
		return nil, err
	}
	if acts, err = measureAll(c); err != nil { // 2 and 3
		return nil, err
	}
	momentumReport(r, acts, pg) // 2
	gradientReport(r, acts, pg) // 3
	claims(r, acts, pg)         // at the top of report.md
	if err := r.Execute(reportTmpl, pg); err != nil {
		return nil, err
	}
	r.DescribeKeys(keysText)
	return acts, r.Close()
}
