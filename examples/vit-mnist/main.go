// Vit-mnist trains a small vision Transformer on MNIST, and on
// Fashion-MNIST when it is installed, once per MLP variant (GELU, ReLU,
// GEGLU by default) and seed, every variant from the same seed's batches,
// and checks the claim that GELU's test error is below ReLU's in a vision
// Transformer, with paired sign tests over seeds. Test error is plotted as
// the median with the min–max band over seeds.
//
// The model, behind buildModel in model.go, is nn.ViT: 16 patches of 7×7
// pixels, a [CLS] token, learned positions, pre-LN encoder blocks
// (non-causal self-attention and the MLP of -mlp from nn's activations and
// gates) and a classifier head on [CLS], sized by -d-model, -heads, -blocks
// and -ff.
//
//	go run ./examples/vit-mnist              # 2 data sets × 3 variants × 5 seeds: 3.5–6.1 minutes*
//	go run ./examples/vit-mnist -full        # 4× the steps
//	go run ./examples/vit-mnist -data fashion -mlp gelu,relu,geglu,swiglu -seeds 8
//
// *210 s wall for `go run` on 2 cores shared with other jobs (load
// average about 10), 365 s for the same sizes under load about 16,
// 2026-11-23; the report states the time of its own training steps.
//
// It writes to -out: <data>-<mlp>/seed<n>/ (the trainer's files),
// curves.csv, params.csv, results.csv, error.png, summary.json, claims.csv
// and report.md (prose from report.md.tmpl).
//
// main.go reads top to bottom: data, model, optimizer, the training loop
// (train.Trainer), the final test error, the report. Per data set and
// seed, every MLP variant sees the same batches in the same order.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

func main() {
	c := parseFlags()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "vit-mnist: unexpected arguments %q (flags only)\n", flag.Args())
		os.Exit(2)
	}
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "vit-mnist:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", c.Out+"/report.md")
}

// setting is one cell of the grid.
type setting struct{ Data, MLP string }

func (s setting) String() string { return s.Data + "-" + s.MLP }

type runResult = experiment.Run[setting]

// data is one data set: the training images, the test images scored along
// the way (Eval) and all of them (Test).
type data struct {
	Name              string
	Train, Eval, Test *datasets.Dataset
}

// results is what run returns besides the files.
type results struct {
	Data map[string]data
	Runs []*runResult // seeds outermost, then -data, then -mlp order
}

var dataNames = map[string]string{"mnist": "MNIST", "fashion": "Fashion-MNIST"}

func loadData(c config, name string) (d data, err error) {
	tr, te, err := experiment.MNIST("")
	if name == "fashion" {
		tr, te, err = datasets.FashionMNIST("")
	}
	if err != nil {
		return d, fmt.Errorf("-data %s: %w", name, err)
	}
	subsets := experiment.Flags{Seed: c.Seed, TrainN: c.TrainN, TestN: c.TestN}
	if d.Train, d.Test, err = subsets.Subsets(tr, te); err != nil {
		return d, err
	}
	if d.Train.Len() < c.Batch {
		return d, fmt.Errorf("-train-n %d: fewer training images than one batch of %d", d.Train.Len(), c.Batch)
	}
	d.Name, d.Eval = dataNames[name], d.Test
	if c.EvalN < d.Test.Len() {
		d.Eval, err = experiment.Subset(d.Test, c.EvalN, c.Seed, "eval")
	}
	return d, err
}

func run(c config) (*results, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	res := &results{Data: map[string]data{}}
	var settings []setting
	for _, name := range c.Data {
		d, err := loadData(c, name)
		if err != nil {
			return nil, err
		}
		res.Data[name] = d
		for _, m := range c.MLPs {
			settings = append(settings, setting{name, m})
		}
	}
	grid := experiment.Grid[setting]{Settings: settings, Name: setting.String, Dir: c.Out, Workers: c.Workers,
		Metrics: []string{"train_loss", "test_error"}}
	for i := range c.Seeds {
		grid.Seeds = append(grid.Seeds, c.Seed+uint64(i))
	}
	if c.Progress == nil {
		c.Progress = os.Stderr
	}
	if !c.Quiet {
		grid.Progress = c.Progress
	}
	var err error
	if res.Runs, err = grid.Run(func(r *runResult) error { return trainOne(c, res.Data[r.Setting.Data], r) }); err != nil {
		return nil, err
	}
	return res, writeReport(c, res)
}

func (c config) model(mlp string) modelConfig {
	return modelConfig{DModel: c.DModel, Heads: c.Heads, Blocks: c.Blocks, FF: c.FF, MLP: mlp}
}

// newModel wraps buildModel for the trainer: inputs and cross-entropy.
func newModel(mc modelConfig, rows int, seed uint64) (m train.Model, err error) {
	defer catch(&err)
	g := must(graph.New(tensor.Float32, seed))
	x, y := must(g.Input("x", rows, side*side)), must(g.Input("y", rows))
	logits := must(buildModel(g, x, mc))
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: must(nn.CrossEntropyLoss(logits, y)), Task: train.Classification}, nil
}

// countParams builds the model and counts its trainable scalars.
func countParams(mc modelConfig) (n int, err error) {
	m, err := newModel(mc, 1, 1)
	if err != nil {
		return 0, err
	}
	for _, p := range m.Graph.ParamTensors() {
		n += p.Value.Shape().TotalSize()
	}
	return n, nil
}

func trainOne(c config, d data, r *runResult) (err error) {
	defer catch(&err)
	m := must(newModel(c.model(r.Setting.MLP), c.Batch, r.Seed))
	trainData := must(datasets.NewLoader(d.Train, datasets.LoaderConfig{BatchSize: c.Batch, Shuffle: true, Seed: r.Seed, DropLast: true}))
	evalData := must(datasets.NewLoader(d.Eval, datasets.LoaderConfig{BatchSize: c.Batch}))
	sched := must(optim.Warmup(must(optim.Cosine(c.LR, c.Steps, c.LR/10)), c.Warmup))
	t := must(train.New(m, optim.NewAdamW(c.LR), trainData, evalData, train.Config{
		MaxSteps: c.Steps, EvalEvery: c.EvalEvery, EvalAtStart: true, Schedule: sched, ClipNorm: c.Clip,
		Dir: r.Dir, Quiet: c.Quiet || c.Workers > 1, Progress: c.Progress,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
			return r.Curve.Add(e.Step, e.TrainLoss, 1-e.ValAccuracy)
		}}))
	if err := r.Train(t); err != nil {
		return err
	}
	if r.Diverged != "" {
		return errors.New(r.Diverged)
	}
	e := must(t.Evaluate(must(datasets.NewLoader(d.Test, datasets.LoaderConfig{BatchSize: c.Batch}))))
	r.Values["final_test_error"] = 1 - e.Accuracy
	return nil
}
