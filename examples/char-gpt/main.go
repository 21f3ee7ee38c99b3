// Char-gpt trains a small character-level language model on Newton's
// Opticks once per feed-forward variant (ReLU, GELU, GELU-tanh, SiLU and
// the gated GEGLU, SwiGLU, ReGLU at equal parameter count) and seed, every
// variant on the same seed's batches, and checks three claims with paired
// sign tests over seeds: GELU beats ReLU on language (doc 004), GELU
// converges faster (doc 001), and Shazeer 2020's ordering (gated below
// ungated; GEGLU ≈ SwiGLU < ReGLU). Validation loss is in bits per
// character, median and min–max over seeds; the report ends with text
// sampled from every model at the same seed and temperature.
//
// The model, behind buildModel in model.go, is nn.GPT (nanoGPT's
// architecture: causal self-attention, pre-LN blocks, tied embeddings)
// sized by -d-model, -heads, -blocks, -T and -ff, with the MLP of -mlp from
// nn's activations and gates. It trains as GPTs do, on every position of
// each window with the targets shifted by one; validation scores the last
// position (a full context of T characters). Samples come from
// GPT.NextToken through nn.Generate.
//
//	go run ./examples/char-gpt            # 7 variants × 5 seeds: 5.1–8.2 minutes*
//	go run ./examples/char-gpt -full      # 4× the steps
//	go run ./examples/char-gpt -mlp relu,gelu,geglu -seeds 8 -steps 2000
//
// *303 s wall for `go run` on 2 cores shared with other jobs (load
// average about 10), 489 s under load about 15, 2026-11-23; the report states the time of its own training steps.
//
// It writes to -out: <mlp>/seed<n>/ (the trainer's files), params.csv,
// results.csv, curves.csv, loss.png, samples.csv, claims.csv, summary.json
// and report.md, whose prose is report.md.tmpl.
//
// main.go reads like nanoGPT's train.py: data, model, optimizer, the
// training loop (train.Trainer), sampling, the report. Per seed, every MLP
// variant sees the same batches in the same order.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

func main() {
	c := parseFlags()
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

type runResult = experiment.Run[string]

// data is the task shared by every run.
type data struct {
	Name             string
	Chars            int
	Train, Val, Eval *datasets.Dataset // Eval: the validation windows scored
	Vocab            *datasets.CharVocab
	Prompt           []int // the first T characters of the validation text
}

type results struct {
	Data   data
	Model  map[string]modelConfig // per MLP variant
	Params map[string]int         // trainable scalars per MLP variant, from the graph
	Runs   []*runResult           // seeds outermost, then -mlp order
}

func loadData(c config) (d data, err error) {
	d.Name, d.Chars = "Newton's Opticks (datasets.Opticks)", 0
	text := datasets.Opticks()
	if c.TextFile != "" {
		if text, err = datasets.LoadText(c.TextFile); err != nil {
			return d, err
		}
		d.Name = filepath.Base(c.TextFile)
	}
	if d.Train, d.Val, d.Vocab, err = datasets.CharTask(text, datasets.CharTaskConfig{Context: c.T, ValFraction: 0.1, Seed: c.Seed}); err != nil {
		return d, fmt.Errorf("-T %d: %w", c.T, err)
	}
	d.Chars, d.Eval = len([]rune(text)), d.Val
	if c.ValWindows > 0 && c.ValWindows < d.Val.Len() {
		idx := rng.New(c.Seed, "validation windows").Perm(d.Val.Len())[:c.ValWindows]
		slices.Sort(idx)
		if d.Eval, err = d.Val.Subset(idx); err != nil {
			return d, err
		}
	}
	if d.Train.Len() < c.Batch || d.Val.Len() == 0 {
		return d, fmt.Errorf("%d training and %d validation windows of %d characters: want a batch of %d and a validation window; use a longer text or smaller -batch, -T",
			d.Train.Len(), d.Val.Len(), c.T, c.Batch)
	}
	for _, id := range d.Val.X[:c.T] {
		d.Prompt = append(d.Prompt, int(id))
	}
	return d, nil
}

func run(c config) (*results, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	d, err := loadData(c)
	if err != nil {
		return nil, err
	}
	res := &results{Data: d, Model: map[string]modelConfig{}, Params: map[string]int{}}
	for _, m := range c.MLPs {
		res.Model[m] = modelConfig{Vocab: d.Vocab.Size(), T: c.T, DModel: c.DModel, Heads: c.Heads, Blocks: c.Blocks, FF: c.FF, MLP: m}
		if res.Params[m], err = countParams(res.Model[m]); err != nil {
			return nil, err
		}
	}
	grid := experiment.Grid[string]{Settings: c.MLPs, Name: func(s string) string { return s }, Dir: c.Out, Workers: c.Workers,
		Metrics: []string{"train_bpc", "val_bpc"}}
	for i := range c.Seeds {
		grid.Seeds = append(grid.Seeds, c.Seed+uint64(i))
	}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	if !c.Quiet {
		grid.Progress = c.Progress
	}
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainOne(c, d, res.Model[r.Setting], r) }); err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

// newModel wraps buildModel for the trainer: x and y, the last
// position's logits as the output evaluation scores, and the all-position
// loss as the training loss.
func newModel(mc modelConfig, rows int, seed uint64, recompute bool) (m train.Model, gpt *nn.GPT, err error) {
	defer catch(&err)
	g := must(graph.New(tensor.Float32, seed))
	x, y := must(g.Input("x", rows, mc.T)), must(g.Input("y", rows))
	gpt, last, loss, err := buildModel(g, x, y, mc, recompute)
	if err != nil {
		return m, nil, err
	}
	return train.Model{Graph: g, Input: x, Target: y, Output: last, Loss: loss, Task: train.Classification}, gpt, nil
}

// countParams builds the model and counts its trainable scalars.
func countParams(mc modelConfig) (n int, err error) {
	m, _, err := newModel(mc, 1, 1, false)
	if err != nil {
		return 0, err
	}
	for _, p := range m.Graph.ParamTensors() {
		n += p.Value.Shape().TotalSize()
	}
	return n, nil
}

func trainOne(c config, d data, mc modelConfig, r *runResult) (err error) {
	defer catch(&err)
	m, gpt, err := newModel(mc, c.Batch, r.Seed, c.Recompute)
	if err != nil {
		return err
	}
	trainData := must(datasets.NewLoader(d.Train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: r.Seed, DropLast: true}))
	valData := must(datasets.NewLoader(d.Eval, datasets.LoaderConfig{BatchSize: c.Batch}))
	sched := must(optim.Warmup(must(optim.Cosine(c.LR, c.Steps, c.LR/10)), c.Warmup)) // nanoGPT: decay to lr/10
	t := must(train.New(m, optim.NewAdamW(c.LR), trainData, valData, train.Config{
		MaxSteps: c.Steps, EvalEvery: c.EvalEvery, EvalAtStart: true, Schedule: sched, ClipNorm: c.Clip,
		Dir: r.Dir, Quiet: c.Quiet || c.Workers > 1, Progress: c.Progress,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
			return r.Curve.Add(e.Step, bits(e.TrainLoss), bits(e.ValLoss))
		}}))
	if err := r.Train(t); err != nil {
		return err
	}
	if r.Diverged != "" {
		return errors.New(r.Diverged)
	}
	r.Vectors["sample"], err = sample(c, d, gpt)
	return err
}

// sample generates c.SampleLen characters after d.Prompt with the trained
// model (GPT.NextToken: an inference copy sharing its parameters), at
// c.Temperature, the sampler seeded by -seed for every model.
func sample(c config, d data, m *nn.GPT) (ids []float64, err error) {
	defer catch(&err)
	next := must(m.NextToken())
	for _, id := range must(nn.Generate(next, d.Prompt, c.SampleLen, must(nn.NewSampler(nn.SampleConfig{Temperature: c.Temperature, Seed: c.Seed}))))[len(d.Prompt):] {
		ids = append(ids, float64(id))
	}
	return ids, nil
}

func bits(nats float64) float64 { return nats / math.Ln2 }
