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
	"strconv"
	"strings"
	"text/template"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives identical
// files.
type config struct {
	Out, MNIST               string
	Seed                     uint64
	Acts                     []activation.Activation
	Hidden                   []int
	Batch                    int
	LR, Momentum             float64
	WindowLRs                []float64
	InitSamples, TrainSteps  int
	Window, Blocks, VarBlock int
	UnitBatches              int // batches per phase whose pre-activations give the network's E[f'(z)²]
	BurnEps                  float64
	TrainN, TestN            int      // -train-n, -test-n: seeded subsets of the MNIST images (0: all 60 000 and 10 000)
	Workers, DPI             int      // Workers: activations measured at once, one BLAS thread each
	Quiet                    bool     // no progress lines on stderr
	Args                     []string // the command line shown in report.md
}

func main() {
	c := config{Hidden: []int{128, 128}, WindowLRs: []float64{0.005, 0.0005}, Args: os.Args}
	c.Acts, _ = activation.ParseActivations("relu,gelu")
	// -seed is the seed of the weights, the batch order, the batches drawn
	// with replacement and the -train-n/-test-n subsets.
	f := experiment.Flags{Out: "out/gradient-variance", Seed: 1, Workers: runtime.NumCPU()}
	f.Register(flag.CommandLine, experiment.SubsetFlag)
	flag.StringVar(&c.MNIST, "mnist", "", "directory with the MNIST IDX files (default: the GoMNIST module copy)")
	flag.Func("acts", "activations, comma-separated, as activation.ParseActivations takes them (default relu,gelu)",
		func(s string) (err error) { c.Acts, err = activation.ParseActivations(s); return err })
	flag.Func("hidden", "hidden layer widths, comma-separated (default 128,128)", func(s string) (err error) { c.Hidden, err = list(s, strconv.Atoi); return err })
	flag.IntVar(&c.Batch, "batch", 64, "mini-batch size")
	flag.Float64Var(&c.LR, "lr", 0.05, "learning rate of the training phase")
	flag.Func("window-lrs", "learning rates of the late windows, measured one after the other, comma-separated (default 0.005,0.0005)",
		func(s string) (err error) { c.WindowLRs, err = list(s, parseFloat); return err })
	flag.Float64Var(&c.Momentum, "momentum", 0.9, "momentum of the optimizer that trains (heavy ball, PyTorch's default)")
	flag.IntVar(&c.InitSamples, "init-samples", 1000, "gradient samples at the frozen initial weights")
	flag.IntVar(&c.TrainSteps, "train-steps", 1500, "training steps before the window")
	flag.IntVar(&c.Window, "window", 3000, "measured steps of the window and of the frozen phase (after burn-in)")
	flag.IntVar(&c.Blocks, "blocks", 6, "blocks the window is cut into for standard errors; must divide -window")
	flag.IntVar(&c.VarBlock, "var-block", 100, "training steps per gradient-variance point during training")
	flag.IntVar(&c.UnitBatches, "unit-batches", 50, "batches per phase over which the network's E[f'(z)²] is averaged")
	flag.Float64Var(&c.BurnEps, "burn-eps", 1e-4, "burn-in: skip the first t steps of each buffer, with β^t ≤ burn-eps")
	flag.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots")
	flag.Parse()
	c.Out, c.Seed, c.Workers, c.TrainN, c.TestN = f.Out, f.Seed, f.Workers, f.TrainN, f.TestN
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "gradient-variance:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

//go:embed report.md.tmpl
var reportText string

//go:embed keys.txt
var keysText string

var reportTmpl = template.Must(report.ParseTemplate("report.md.tmpl", reportText))

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// list parses a comma-separated list.
func list[T any](s string, parse func(string) (T, error)) (out []T, err error) {
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

func run(c config) (acts []*actResult, err error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Gradient variance and momentum variance", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	pg := &page{config: c}
	if err := derivStats(r, pg); err != nil { // 1
		return nil, err
	}
	if acts, err = measureAll(c); err != nil { // 2 and 3
		return nil, err
	}
	momentumReport(r, acts, pg) // 2
	gradientReport(r, acts, pg) // 3
	claims(r, acts)             // at the top of report.md
	if err := r.Execute(reportTmpl, pg); err != nil {
		return nil, err
	}
	r.DescribeKeys(keysText)
	return acts, r.Close()
}
