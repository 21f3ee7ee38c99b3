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
//	go run ./examples/dying-neurons                 # defaults: 45 runs, about a minute on 2 cores
//	go run ./examples/dying-neurons -acts relu,gelu -lrs 0.1 -bias default,-3 -steps 2000
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/experiment"
	"github.com/geluproject/gelu/train/probe"
	"github.com/geluproject/gelu/train/report"
)

// config is everything a run depends on; the same config gives identical
// files. -seed is the seed of the weights, the train/validation split, the
// batch order and the -train-n/-test-n subsets.
type config struct {
	experiment.Flags                        // -out, -seed, -workers, -train-n, -test-n
	MNIST            string                 `flag:"mnist" help:"directory with the MNIST IDX files (default: the GoMNIST module copy)"`
	Acts             experiment.Activations `flag:"acts" help:"activations, comma-separated (names as activation.ParseActivation takes them)"`
	LRs              experiment.Floats      `flag:"lrs" help:"learning rates, comma-separated"`
	Biases           experiment.Strings     `flag:"bias" help:"bias initializations, comma-separated: default (PyTorch's U(±1/√in)) or a constant"`
	Hidden           experiment.Ints        `flag:"hidden" help:"hidden layer widths, comma-separated"`
	NeuronSteps      int                    `flag:"neuron-steps" help:"gradient-descent steps on the single neuron of part (a)"`
	Batch            int                    `flag:"batch" help:"mini-batch size"`
	Steps            int                    `flag:"steps" help:"optimizer steps per run"`
	ProbeEvery       int                    `flag:"probe-every" help:"count dead units every this many steps"`
	ProbeN           int                    `flag:"probe-n" help:"validation examples the dead units are counted on"`
	Momentum         float64                `flag:"momentum" help:"SGD heavy-ball momentum (PyTorch's convention, dampening 0)"`
	Tol              float64                `flag:"tol" help:"a unit is dead when |f'(z)| ≤ tol on every probe example"`
	DPI              int                    `flag:"dpi" help:"resolution of the PNG plots"`
	Quiet            bool                   // no progress output
	Args             []string               // the command line shown in report.md
}

func main() {
	c := config{Flags: experiment.Flags{Out: "out/dying-neurons", Seed: 1, Workers: runtime.NumCPU()}, Args: os.Args,
		Acts: experiment.Activations{activation.ReLU, activation.GELU, activation.SiLU, activation.ELU, activation.Softplus},
		LRs:  experiment.Floats{0.1, 0.3, 0.5}, Biases: experiment.Strings{"default", "-1", "-3"}, Hidden: experiment.Ints{128, 128},
		NeuronSteps: 500, Batch: 64, Steps: 600, ProbeEvery: 25, ProbeN: 1000, Momentum: 0.9, Tol: probe.DefaultDeadTol, DPI: 144}
	c.Flags.Register(flag.CommandLine, experiment.SubsetFlag)
	if err := experiment.BindFlags(flag.CommandLine, &c); err != nil {
		experiment.Exit("dying-neurons", c.Out, err)
	}
	flag.Parse()
	_, err := run(c)
	experiment.Exit("dying-neurons", c.Out, err)
}

func (c config) validate() error {
	switch {
	case len(c.Acts) == 0 || len(c.LRs) == 0 || len(c.Biases) == 0 || len(c.Hidden) == 0:
		return fmt.Errorf("need at least one activation, learning rate, bias init and hidden layer")
	case c.Batch < 1 || c.Steps < 1 || c.NeuronSteps < 1 || c.ProbeEvery < 1 || c.ProbeN < 1 || c.TestN < 0 || c.TrainN < 0 || c.Workers < 1:
		return fmt.Errorf("-batch %d -steps %d -neuron-steps %d -probe-every %d -probe-n %d -test-n %d -train-n %d -workers %d: want positive values (test-n, train-n ≥ 0)",
			c.Batch, c.Steps, c.NeuronSteps, c.ProbeEvery, c.ProbeN, c.TestN, c.TrainN, c.Workers)
	case !(c.Momentum >= 0 && c.Momentum < 1) || !(c.Tol >= 0 && c.Tol < 1):
		return fmt.Errorf("-momentum %v -tol %v: want both in [0, 1)", c.Momentum, c.Tol)
	}
	for _, lr := range c.LRs {
		if !(lr > 0) {
			return fmt.Errorf("-lrs: %v is not a positive number", lr)
		}
	}
	for _, w := range c.Hidden {
		if w <= 0 {
			return fmt.Errorf("-hidden: %d is not a positive width", w)
		}
	}
	for _, b := range c.Biases {
		if _, err := strconv.ParseFloat(b, 64); err != nil && b != "default" {
			return fmt.Errorf("-bias: %q, want default or a number", b)
		}
	}
	return nil
}

// run is the whole program: part (a), the sweep of part (b), the claims,
// then report.md.
func run(c config) ([]*runResult, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r, err := report.New(c.Out, "Dying neurons: ReLU, GELU and the others", report.WithCommand(c.Args...))
	if err != nil {
		return nil, err
	}
	pg := newPage(c)
	if err := neuronGradients(r, pg); err != nil {
		return nil, err
	}
	if err := neuronDescent(r, pg); err != nil {
		return nil, err
	}
	runs, err := sweep(c)
	if err != nil {
		return nil, err
	}
	if err := sweepReport(r, runs, pg); err != nil {
		return nil, err
	}
	if err := claims(r, runs, pg); err != nil {
		return nil, err
	}
	if err := r.Execute(reportTmpl, pg); err != nil {
		return nil, err
	}
	r.DescribeKeys(keysText)
	return runs, r.Close()
}
