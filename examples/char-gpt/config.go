package main

// The configuration: defaults, flags and their checks.

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on.
type config struct {
	Out, TextFile                         string
	MLPs                                  experiment.Strings
	T, DModel, Heads, Blocks, FF          int
	Batch, Steps, EvalEvery, Warmup       int
	ValWindows, Seeds, Workers, SampleLen int
	DPI                                   int
	LR, Clip, Temperature                 float64
	Seed                                  uint64
	Full, Recompute, Quiet                bool
	Progress                              io.Writer // nil: os.Stderr
	Args                                  []string  // the command line shown in report.md
}

// defaults: sized so that 7 variants × 5 seeds of the GPT train in under
// 15 minutes on 2 busy cores; each step trains Batch·T = 512 next-character
// predictions. The learning rate was the better of 3e-3 and 8e-3 for GELU
// and ReLU in 400-step runs of seed 1 (width 64, batch 32).
func defaults() config {
	return config{MLPs: experiment.Strings{"relu", "gelu", "gelu_tanh", "silu", "geglu", "swiglu", "reglu"},
		T: 32, DModel: 48, Heads: 4, Blocks: 2, FF: 192, Batch: 16, Steps: 400, EvalEvery: 100, Warmup: 40,
		ValWindows: 1024, SampleLen: 300, DPI: 144, LR: 8e-3, Clip: 1, Temperature: 0.8, Args: os.Args}
}

// ints are the integer flags with their least allowed values; main
// registers them and check enforces the bounds.
func (c *config) ints() []intFlag {
	return []intFlag{
		{&c.T, "T", 1, "context length in characters (nanoGPT's block_size)"}, {&c.DModel, "d-model", 1, "model width"},
		{&c.Heads, "heads", 1, "attention heads; must divide -d-model"}, {&c.Blocks, "blocks", 1, "Transformer blocks"},
		{&c.FF, "ff", 3, "inner width of an ungated MLP; gated ones get 2/3 of it (equal parameters)"},
		{&c.Batch, "batch", 1, "windows per step"}, {&c.Steps, "steps", 1, "optimizer steps per run"},
		{&c.EvalEvery, "eval-every", 1, "evaluate every this many steps"}, {&c.Warmup, "warmup", 0, "steps of linear warmup before the cosine decay"},
		{&c.ValWindows, "val-windows", 0, "validation windows scored (a seeded sample); 0: all"},
		{&c.SampleLen, "sample", 0, "characters sampled from each model for the report"}, {&c.DPI, "dpi", 0, "resolution of the plot in dots per inch"},
		{&c.Seeds, "seeds", 1, ""}, {&c.Workers, "workers", 1, ""}, // registered by experiment.Flags
	}
}

type intFlag struct {
	p     *int
	name  string
	min   int
	usage string
}

func (c config) check() error {
	seen := map[string]bool{}
	for _, m := range c.MLPs {
		if _, ok := mlpKinds[m]; !ok || seen[m] {
			return fmt.Errorf("-mlp %q: want a comma-separated list of distinct names from %s", m, mlpNames())
		}
		seen[m] = true
	}
	for _, v := range c.ints() {
		if *v.p < v.min {
			return fmt.Errorf("-%s %d: want ≥ %d", v.name, *v.p, v.min)
		}
	}
	switch {
	case len(c.MLPs) == 0:
		return fmt.Errorf("-mlp is empty: want at least one of %s", mlpNames())
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case !(c.LR > 0 && c.LR <= 100) || !(c.Clip >= 0) || !(c.Temperature >= 0 && c.Temperature <= 100):
		return fmt.Errorf("-lr %v -clip %v -temperature %v: want 0 < lr ≤ 100 (AdamW's decay needs lr·0.01 ≤ 1), clip ≥ 0, 0 ≤ temperature ≤ 100", c.LR, c.Clip, c.Temperature)
	}
	return nil
}

// parseFlags reads the command line into a config.
func parseFlags() config {
	c := defaults()
	f := experiment.Flags{Out: "out/char-gpt", Seed: 1, Seeds: 5, Workers: 2}
	f.Register(flag.CommandLine, experiment.SeedsFlag)
	flag.StringVar(&c.TextFile, "text", "", "UTF-8 text file to model (default: Newton's Opticks, embedded)")
	flag.Var(&c.MLPs, "mlp", "comma-separated feed-forward variants: "+mlpNames())
	for _, v := range c.ints() {
		if v.usage != "" {
			flag.IntVar(v.p, v.name, *v.p, v.usage)
		}
	}
	flag.Float64Var(&c.LR, "lr", c.LR, "peak learning rate of AdamW")
	flag.Float64Var(&c.Clip, "clip", c.Clip, "clip the global gradient norm to this; 0: off")
	flag.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature")
	flag.BoolVar(&c.Full, "full", false, "the longer run: 4× -steps, -eval-every and -warmup")
	flag.BoolVar(&c.Recompute, "recompute", false, "recompute block activations in the backward pass (less memory, more time)")
	flag.BoolVar(&c.Quiet, "quiet", false, "no progress output")
	flag.Parse()
	c.Out, c.Seed, c.Seeds, c.Workers = f.Out, f.Seed, f.Seeds, f.Workers
	if c.Full {
		c.Steps, c.EvalEvery, c.Warmup = 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
	}
	return c
}
