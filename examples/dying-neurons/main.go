// Dying-neurons checks the documents' dying-ReLU argument (shared/seeds/000)
// in two parts and writes to -out:
//
//	report.md        the command, the documents' claims with verdicts, tables, plots
//	summary.json     every reported number under a documented key
//	*.csv            the tables; dead.csv has every probe of every run
//	*.png            z during gradient descent on one neuron; per (lr, bias init): dead fraction and median max |f'| over steps
//
// (a) The single neuron L = ½(a(w·x + b) − t)² at z = −1: ∂L/∂w through the
// graph against (a(z) − t)·a'(z)·x for every activation, then gradient
// descent from z = −3, −1, −0.5.
//
// (b) An MLP on MNIST (784 → -hidden → 10, float32) trained with SGD and
// heavy-ball momentum for every activation × learning rate × bias
// initialization. Every -probe-every steps the hidden pre-activations of a
// fixed validation subset (-probe-n examples held out of the training
// images) are kept (graph.Keep on mlp.Pre) and a unit counts as dead when
// |f'(z)| ≤ -tol on every one of them (package train/probe explains the
// tolerance). All runs start from the same weights (same seed and
// parameter names); only the biases differ between bias settings.
//
//	go run ./examples/dying-neurons                 # defaults: 230 s of CPU time measured, ≈ 2 min on 2 free cores
//	go run ./examples/dying-neurons -acts relu,gelu -lrs 0.1 -bias default,-3 -steps 2000
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives identical
// files.
type config struct {
	Out, MNIST         string
	Seed               uint64
	Acts               []ops.Activation
	LRs                []float64
	Biases             []string
	Hidden             []int
	Batch, Steps       int
	NeuronSteps        int // gradient-descent steps on the single neuron
	ProbeEvery, ProbeN int
	TestN              int // test examples for the final accuracy (0: all 10 000)
	TrainN             int // MNIST training images used, before the validation split (0: all 60 000)
	Momentum, Tol      float64
	Workers, DPI       int
	Quiet              bool     // no progress output
	Args               []string // the command line shown in report.md
}

func main() {
	var c config
	var acts, lrs, biases, hidden string
	flag.StringVar(&c.Out, "out", "out/dying-neurons", "output folder; created if needed, the files this program writes are replaced")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the weights, the train/validation split and the batch order")
	flag.StringVar(&c.MNIST, "mnist", "", "directory with the MNIST IDX files (default: the GoMNIST module copy)")
	flag.StringVar(&acts, "acts", "relu,gelu,silu,elu,softplus", "activations, comma-separated (names as ops.ParseActivation takes them)")
	flag.StringVar(&lrs, "lrs", "0.1,0.3,0.5", "learning rates, comma-separated")
	flag.StringVar(&biases, "bias", "default,-1,-3", "bias initializations, comma-separated: default (PyTorch's U(±1/√in)) or a constant")
	flag.StringVar(&hidden, "hidden", "128,128", "hidden layer widths, comma-separated")
	flag.IntVar(&c.NeuronSteps, "neuron-steps", 500, "gradient-descent steps on the single neuron of part (a)")
	flag.IntVar(&c.Batch, "batch", 64, "mini-batch size")
	flag.IntVar(&c.Steps, "steps", 600, "optimizer steps per run")
	flag.IntVar(&c.ProbeEvery, "probe-every", 25, "count dead units every this many steps")
	flag.IntVar(&c.ProbeN, "probe-n", 1000, "validation examples the dead units are counted on")
	flag.IntVar(&c.TestN, "test-n", 0, "test examples for the final accuracy (0: all 10 000)")
	flag.IntVar(&c.TrainN, "train-n", 0, "use the first this many MNIST training images, before the 1/12 validation split (0: all 60 000)")
	flag.Float64Var(&c.Momentum, "momentum", 0.9, "SGD heavy-ball momentum (PyTorch's convention, dampening 0)")
	flag.Float64Var(&c.Tol, "tol", probe.DefaultDeadTol, "a unit is dead when |f'(z)| ≤ tol on every probe example")
	flag.IntVar(&c.Workers, "workers", runtime.NumCPU(), "runs trained in parallel (results do not depend on it)")
	flag.IntVar(&c.DPI, "dpi", 144, "resolution of the PNG plots")
	flag.Parse()
	c.Args = os.Args
	err := parseLists(&c, acts, lrs, biases, hidden)
	if err == nil {
		_, err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dying-neurons:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

// results is what the tests check besides the files.
type results struct {
	Runs []*runResult
}

// measured collects the numbers the claims refer to, by summary key.
type measured map[string]float64

func run(c config) (*results, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Dying neurons: ReLU, GELU and the others", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	m := measured{}
	if err := neuronGradients(r, m); err != nil {
		return nil, err
	}
	if err := neuronDescent(r, c, m); err != nil {
		return nil, err
	}
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	runs, err := sweep(c, d)
	if err != nil {
		return nil, err
	}
	if err := sweepReport(r, c, runs, m); err != nil {
		return nil, err
	}
	if err := claims(r, c, m, runs); err != nil {
		return nil, err
	}
	describe(r)
	return &results{Runs: runs}, r.Close()
}
