package main

// The command line: -full's settings, the shared flags, the checks, and
// the text as token ids.

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train/experiment"
)

// full is nanoGPT's README command for a CPU (block_size 64, batch_size
// 12, n_layer 4, n_head 4, n_embd 128, max_iters = lr_decay_iters 2000,
// dropout 0) on config/train_shakespeare_char.py (eval_interval 250,
// warmup_iters 100), with a grid of rates from half its learning_rate
// 1e-3 to 16 times it (the GELU-family MLPs chose the top of a grid that
// ended at 4e-3) and every held-out character scored.
var full = map[string]string{"T": "64", "batch": "12", "blocks": "4", "heads": "4", "d-model": "128", "steps": "2000",
	"eval-every": "250", "warmup": "100", "lrs": "5e-4,1e-3,2e-3,4e-3,8e-3,1.6e-2", "val-chars": "0"}

// flags are the shared flags char-gpt takes (experiment.Flags).
const flags = experiment.SeedsFlag | experiment.ResumeFlag | experiment.ShardFlags

// parseFlags defines the flags on fs and parses args; with -full, full's
// settings replace the defaults of the flags args does not set. getenv
// supplies a worker's shard when -shard is not given (a Slurm array task).
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	c := defaults()
	c.Args = experiment.Command(append([]string{fs.Name()}, args...))
	set, err := c.Flags.Parse(fs, args, flags, &c)
	for name, v := range full {
		if err == nil && c.Full && !set[name] {
			err = fs.Set(name, v)
		}
	}
	if err == nil {
		c.Part, err = c.ResolveShard(getenv)
	}
	return c, err
}

// check returns an error naming every setting that cannot work.
func (c config) check() error {
	errs := []error{experiment.CheckFlags(c), c.Flags.Check(flags),
		experiment.CheckNames("mlp", c.MLPs, func(m string) bool { _, err := transformer.ParseMLP(m); return err == nil },
			transformer.MLPNames()+" or an activation name")}
	if c.Heads > 0 && c.DModel%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("-heads %d does not divide -d-model %d", c.Heads, c.DModel))
	}
	for _, lr := range c.LRs {
		if lr*c.WeightDecay > 1 {
			errs = append(errs, fmt.Errorf("-lrs %v with -weight-decay %v: want lr·weight-decay ≤ 1 (AdamW multiplies the weights by 1 − lr·weight-decay)", lr, c.WeightDecay))
		}
	}
	if _, err := nn.NewSampler(nn.SampleConfig{Temperature: c.Temperature, Seed: c.Seed}); err != nil {
		errs = append(errs, fmt.Errorf("-temperature: %w", err))
	}
	return errors.Join(errs...)
}

// data is the text as token ids: the first 90% to train on, the last 10%
// (its first -val-chars) to validate on, as nanoGPT's prepare.py splits.
type data struct {
	Name           string // "Newton's Opticks (datasets.Opticks)" or the file's base name
	Chars, HeldOut int    // characters in the text, and in its last 10%
	Train, Val     []int
	Vocab          *datasets.CharVocab
	Sum            string // SHA-256 of the text, for the runs' fingerprint
}

// loadData checks c and reads the text it names.
func loadData(c config) (d data, err error) {
	if err := c.check(); err != nil {
		return d, err
	}
	text, name, err := transformer.CharText(c.TextFile)
	if err != nil {
		return d, err
	}
	d.Name, d.Chars, d.Sum = name, len([]rune(text)), fmt.Sprintf("%x", sha256.Sum256([]byte(text)))
	if d.Vocab, err = datasets.NewCharVocab(text); err != nil {
		return d, err
	}
	ids, err := d.Vocab.Encode(text)
	if err == nil {
		d.Train, d.Val, err = datasets.SplitTokens(ids, 0.1)
	}
	if err != nil {
		return d, fmt.Errorf("%s: %w", d.Name, err)
	}
	if d.HeldOut = len(d.Val); c.ValChars > 0 && c.ValChars < len(d.Val) {
		d.Val = d.Val[:c.ValChars]
	}
	if len(d.Train) <= c.T || len(d.Val) <= c.T {
		return d, fmt.Errorf("%s: %d characters to train on and %d to validate on: want more than -T %d in each; use a longer text, a smaller -T or a larger -val-chars",
			d.Name, len(d.Train), len(d.Val), c.T)
	}
	return d, nil
}

// fingerprint is every setting a run's results depend on besides its MLP,
// rate and seed (experiment.Grid.Fingerprint): the text, the model and
// the recipe, the sampling, and the BLAS.
func (c config) fingerprint(d data) string {
	return strings.Join([]string{"text=" + d.Sum, fmt.Sprintf("T=%d d=%d heads=%d blocks=%d ff=%d batch=%d steps=%d eval-every=%d warmup=%d beta2=%v weight-decay=%v clip=%v val-chars=%d",
		c.T, c.DModel, c.Heads, c.Blocks, c.FF, c.Batch, c.Steps, c.EvalEvery, c.Warmup, c.Beta2, c.WeightDecay, c.Clip, len(d.Val)),
		fmt.Sprintf("sample=%d temperature=%v sample-seed=%d blas=%s", c.SampleLen, c.Temperature, c.Seed, experiment.RunBLAS())}, " ")
}

// dirName is a setting's folder: "gelu/lr0.002"; an activation's
// parameter separator ":" becomes "_" ("elu_0.5/lr0.002").
func (s setting) dirName() string {
	return filepath.ToSlash(filepath.Join(strings.ReplaceAll(s.MLP, ":", "_"), fmt.Sprintf("lr%g", s.LR)))
}
