// Char-gpt trains a small character-level language model on Newton's
// Opticks once per feed-forward variant (ReLU, GELU, GELU-tanh, SiLU and
// the gated GEGLU, SwiGLU, ReGLU at equal parameter count) and seed, every
// variant from the same seed's batches, and checks three claims: GELU
// beats ReLU on language (doc 004), GELU converges faster (doc 001), and
// Shazeer 2020's ordering (gated below ungated; GEGLU ≈ SwiGLU < ReGLU).
// Validation loss is in bits per character, with median and min–max bands
// over seeds; the report ends with text sampled from every model at the
// same seed and temperature.
//
// The model is behind one function, buildModel in model.go: today a
// stand-in without attention, later nn.GPT. The flags already name the
// GPT's sizes (-d-model, -heads, -blocks, -T, -mlp).
//
//	go run ./examples/char-gpt            # 7 variants × 3 seeds: see report.md for the measured time
//	go run ./examples/char-gpt -full      # 5 seeds, 4× the steps
//	go run ./examples/char-gpt -mlp relu,gelu,geglu -seeds 5 -steps 2000
//
// It writes to -out: <mlp>/seed<n>/ (the trainer's files), curves.csv,
// setup.csv, params.csv, results.csv, samples.csv, loss.png, summary.json,
// claims.csv and report.md (prose from report.md.tmpl).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geluproject/gelu/train/experiment"
)

// config is everything a run depends on.
type config struct {
	Out, TextFile                         string
	MLPs                                  experiment.Strings
	T, DModel, Heads, Blocks, Embed, FF   int
	Batch, Steps, EvalEvery, Warmup       int
	ValWindows, Seeds, Workers, SampleLen int
	DPI                                   int
	LR, Clip, Temperature                 float64
	Seed                                  uint64
	Full, Recompute, Quiet                bool
	Progress                              io.Writer // nil: os.Stderr
	Args                                  []string  // the command line shown in report.md
}

func defaults() config {
	return config{MLPs: experiment.Strings{"relu", "gelu", "gelu_tanh", "silu", "geglu", "swiglu", "reglu"},
		T: 32, DModel: 96, Heads: 4, Blocks: 3, Embed: 16, FF: 384, Batch: 96, Steps: 600, EvalEvery: 100, Warmup: 50,
		ValWindows: 2048, SampleLen: 300, DPI: 144, LR: 8e-3, Clip: 1, Temperature: 0.8, Args: os.Args}
}

func main() {
	c := defaults()
	f := experiment.Flags{Out: "out/char-gpt", Seed: 1, Seeds: 3, Workers: 2}
	f.Register(flag.CommandLine, experiment.SeedsFlag)
	flag.StringVar(&c.TextFile, "text", "", "UTF-8 text file to model (default: Newton's Opticks, embedded)")
	flag.Var(&c.MLPs, "mlp", "comma-separated feed-forward variants: "+mlpNames())
	flag.IntVar(&c.T, "T", c.T, "context length in characters (nanoGPT's block_size)")
	flag.IntVar(&c.DModel, "d-model", c.DModel, "model width")
	flag.IntVar(&c.Heads, "heads", c.Heads, "attention heads (must divide -d-model; unused by the stand-in model)")
	flag.IntVar(&c.Blocks, "blocks", c.Blocks, "Transformer blocks")
	flag.IntVar(&c.FF, "ff", c.FF, "inner width of an ungated MLP; gated ones get 2/3 of it (equal parameters)")
	flag.IntVar(&c.Embed, "embed", c.Embed, "stand-in model only: embedding size per character before the projection to -d-model")
	flag.IntVar(&c.Batch, "batch", c.Batch, "windows per step")
	flag.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps per run")
	flag.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "evaluate on the validation windows every this many steps")
	flag.IntVar(&c.Warmup, "warmup", c.Warmup, "steps of linear warmup before the cosine decay")
	flag.IntVar(&c.ValWindows, "val-windows", c.ValWindows, "validation windows scored (a seeded sample); 0: all")
	// 8e-3 was the best of 2e-3, 4e-3 and 8e-3 for GELU and ReLU in 600-step runs of seed 1.
	flag.Float64Var(&c.LR, "lr", c.LR, "peak learning rate of AdamW")
	flag.Float64Var(&c.Clip, "clip", c.Clip, "clip the global gradient norm to this; 0: off")
	flag.IntVar(&c.SampleLen, "sample", c.SampleLen, "characters sampled from each model for the report")
	flag.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature")
	flag.IntVar(&c.DPI, "dpi", c.DPI, "resolution of the PNG plots in dots per inch")
	flag.BoolVar(&c.Full, "full", false, "the longer run: at least 5 seeds and 4× -steps")
	flag.BoolVar(&c.Recompute, "recompute", false, "recompute block activations in the backward pass (less memory, more time)")
	flag.BoolVar(&c.Quiet, "quiet", false, "no progress output")
	flag.Parse()
	c.Out, c.Seed, c.Seeds, c.Workers = f.Out, f.Seed, f.Seeds, f.Workers
	if c.Full {
		c.Seeds, c.Steps, c.EvalEvery, c.Warmup = max(c.Seeds, 5), 4*c.Steps, 4*c.EvalEvery, 4*c.Warmup
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "char-gpt: unexpected arguments %q (flags only)\n", flag.Args())
		os.Exit(2)
	}
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "char-gpt:", err)
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
	switch {
	case len(c.MLPs) == 0:
		return fmt.Errorf("-mlp is empty: want at least one of %s", mlpNames())
	case len(c.MLPs) != len(uniq(c.MLPs)):
		return fmt.Errorf("-mlp %s names a variant twice", strings.Join(c.MLPs, ","))
	case c.T < 1 || c.DModel < 1 || c.Heads < 1 || c.Blocks < 0 || c.Embed < 1 || c.FF < 3:
		return fmt.Errorf("-T %d -d-model %d -heads %d -blocks %d -embed %d -ff %d: want sizes ≥ 1, blocks ≥ 0, ff ≥ 3", c.T, c.DModel, c.Heads, c.Blocks, c.Embed, c.FF)
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel)
	case c.Batch < 1 || c.Steps < 1 || c.EvalEvery < 1 || c.Seeds < 1 || c.Workers < 1 || c.Warmup < 0 || c.ValWindows < 0 || c.SampleLen < 0 || c.DPI < 0:
		return fmt.Errorf("-batch %d -steps %d -eval-every %d -seeds %d -workers %d -warmup %d -val-windows %d -sample %d: want the first five ≥ 1 and the rest ≥ 0",
			c.Batch, c.Steps, c.EvalEvery, c.Seeds, c.Workers, c.Warmup, c.ValWindows, c.SampleLen)
	case !(c.LR > 0 && c.LR*0.01 <= 1) || !(c.Clip >= 0) || !(c.Temperature >= 0):
		return fmt.Errorf("-lr %v -clip %v -temperature %v: want 0 < lr ≤ 100, clip ≥ 0, temperature ≥ 0", c.LR, c.Clip, c.Temperature)
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
