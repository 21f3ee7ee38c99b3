// Char-gpt trains nanoGPT's character-level GPT on a text once per MLP
// (ReLU, GELU, GELU-tanh, SiLU, the gated GEGLU, SwiGLU, ReGLU at equal
// parameter count, or any activation by its activation.ParseActivation
// name, registered ones too) and seed, each MLP at its own learning rate
// chosen on validation, and checks with paired sign tests over seeds: GELU
// beats ReLU on language (doc 004) and converges faster (doc 001), and
// Shazeer 2020's ordering (gated below ungated; GEGLU ≈ SwiGLU < ReGLU).
// The recipe is nanoGPT's train.py with config/train_shakespeare_char.py;
// report.md lists every setting and its source.
//
//	go run ./examples/char-gpt        # a small GPT, 7 MLPs × 5 seeds: a few minutes on 2 cores*
//	go run ./examples/char-gpt -full  # nanoGPT's CPU recipe for its Shakespeare baby GPT
//	go run ./examples/char-gpt -mlp relu,gelu -lrs 2e-3 -seeds 8 -text input.txt
//
// Every rate of -lrs trains with -seed (in -out/select); each MLP keeps
// the rate of the lowest final validation loss and trains it with the
// other seeds (-out/runs). Workers sharing -out split both grids (-shard
// i/n, a Slurm array task): one done with its share of the selection
// stops until every share is done (-wait: waits), then, started again,
// trains its share of the rest; the last to finish writes the report.
// -resume reuses finished runs. *timing.csv has the wall time of each run
// trained by the process that wrote the report. The report's prose is
// report.md.tmpl.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/experiment"
	"gorgonia.org/tensor"
)

// config is everything a run depends on: the shared flags
// (experiment.Flags) and this program's own, whose tags name nanoGPT's
// setting where there is one.
type config struct {
	experiment.Flags // -out, -seed, -seeds, -workers, -resume, -shard, -shards, -merge

	TextFile    string             `flag:"text" help:"UTF-8 text file to model (default: Newton's Opticks, embedded)"`
	MLPs        experiment.Strings `flag:"mlp" help:"comma-separated MLPs; an activation name (activation.ParseActivation, registered ones too) is an ungated MLP; the variants: geglu, gelu, gelu_tanh, reglu, relu, silu, swiglu"`
	T           int                `flag:"T" help:"context length in characters (block_size)" check:"positive"`
	DModel      int                `flag:"d-model" help:"model width (n_embd)" check:"positive"`
	Heads       int                `flag:"heads" help:"attention heads (n_head); must divide -d-model" check:"positive"`
	Blocks      int                `flag:"blocks" help:"Transformer blocks (n_layer)" check:"positive"`
	FF          int                `flag:"ff" help:"inner width of an ungated MLP (0: 4·d-model); gated ones get 2/3 of it" check:"min=0"`
	Batch       int                `flag:"batch" help:"windows per step (batch_size)" check:"positive"`
	Steps       int                `flag:"steps" help:"optimizer steps per run (max_iters, lr_decay_iters)" check:"positive"`
	EvalEvery   int                `flag:"eval-every" help:"evaluate every this many steps (eval_interval)" check:"positive"`
	Warmup      int                `flag:"warmup" help:"steps of linear warmup (warmup_iters)" check:"min=0"`
	LRs         experiment.Floats  `flag:"lrs" help:"peak learning rates (learning_rate; min_lr is a tenth): each MLP's is chosen on validation with -seed" check:"nonempty,positive"`
	Beta2       float64            `flag:"beta2" help:"AdamW's beta2 (beta1 is 0.9)" check:"min=0,below=1"`
	WeightDecay float64            `flag:"weight-decay" help:"AdamW's weight decay on matrices and embeddings" check:"min=0"`
	Clip        float64            `flag:"clip" help:"clip the global gradient norm to this (grad_clip; 0: off)" check:"min=0"`
	ValChars    int                `flag:"val-chars" help:"score the first this many held-out characters (0: all of the last 10%)" check:"min=0"`
	SampleLen   int                `flag:"sample" help:"characters sampled from each model of -seed for the report" check:"min=0"`
	Temperature float64            `flag:"temperature" help:"sampling temperature" check:"min=0"`
	DPI         int                `flag:"dpi" help:"resolution of the plot in dots per inch" check:"min=0"`
	Full        bool               `flag:"full" help:"nanoGPT's CPU recipe for its Shakespeare baby GPT; flags given explicitly still win"`
	Wait        bool               `flag:"wait" help:"a shard done with its part of the rate selection waits for the others' (when all run at once)"`
	Recompute   bool               `flag:"recompute" help:"recompute block activations in the backward pass (less memory, more time, same results)"`
	Quiet       bool               `flag:"quiet" help:"no progress output"`

	Part     experiment.Shard // this worker's part of the grids (-shard resolved)
	Progress io.Writer        // nil: os.Stderr
	Args     []string         // the command line shown in report.md
}

// defaults: a small GPT whose 7 MLPs × 5 seeds and rate selection train
// in a few minutes on 2 cores, long enough to get past the plateau of
// character-pair statistics.
func defaults() config {
	return config{Flags: experiment.Flags{Out: "out/char-gpt", Seed: 1, Seeds: 5, Workers: 2},
		MLPs: experiment.Strings{"relu", "gelu", "gelu_tanh", "silu", "geglu", "swiglu", "reglu"},
		T:    32, DModel: 48, Heads: 4, Blocks: 2, Batch: 16, Steps: 1200, EvalEvery: 150, Warmup: 60, LRs: experiment.Floats{2e-3, 4e-3, 8e-3},
		Beta2: 0.99, WeightDecay: 0.1, Clip: 1, ValChars: 16384, SampleLen: 300, Temperature: 0.8, DPI: 144}
}

func main() {
	start := time.Now()
	c, err := parseFlags(flag.CommandLine, os.Args[1:], os.Getenv)
	var res *results
	if err == nil {
		// Ctrl-C stops the runs at their next step, each with a checkpoint.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		res, err = run(ctx, c)
		stop()
	}
	experiment.ExitGrid("char-gpt", c.Out, err, func() string {
		return fmt.Sprintf("wrote %s/report.md (%d runs, %s)", c.Out, len(res.Runs), time.Since(start).Round(time.Second))
	})
}

// gpt is the model: nanoGPT's GPT (pre-LN causal blocks, learned
// positions, tied embeddings, bias=False, no dropout) with the MLP mlp,
// on a new float32 graph seeded by seed, taking (batch × T) token ids x
// and their next tokens y; its loss and its output, which validation
// scores, cover every position.
func (c config) gpt(vocab int, mlp string, batch int, seed uint64) (train.Model, *nn.GPT, error) {
	cfg := nn.GPTConfig{BlockSize: c.T, VocabSize: vocab, Layers: c.Blocks, Heads: c.Heads, Dim: c.DModel, NoBias: true, Recompute: c.Recompute}
	m, err := transformer.ParseMLP(mlp)
	g, err2 := graph.New(tensor.Float32, seed)
	if err = cmp.Or(err, err2); err != nil {
		return train.Model{}, nil, err
	}
	cfg.Hidden, cfg.Activation, cfg.Gate = m.Block(cmp.Or(c.FF, 4*c.DModel))
	model, err := nn.NewGPT(g, "", cfg)
	if err != nil {
		return train.Model{}, nil, err
	}
	x, _ := g.Input("x", batch, c.T)
	y, _ := g.Input("y", batch, c.T)
	logits, loss, err := model.Loss(x, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Args: model.Args()}, model, err
}

// trainOne trains run r's GPT by nanoGPT's recipe at the run's rate, then
// samples text from it.
func trainOne(ctx context.Context, c config, d data, r *runResult) error {
	m, model, err := c.gpt(d.Vocab.Size(), r.Setting.MLP, c.Batch, r.Seed)
	if err != nil {
		return err
	}
	// One "epoch" of c.Steps random batches: nanoGPT counts iterations only.
	trainData, err1 := datasets.NewTokenStream(d.Train, datasets.TokenStreamConfig{BatchSize: c.Batch, BlockSize: c.T, Batches: c.Steps, Seed: r.Seed})
	valData, err2 := datasets.NewTokenStream(d.Val, datasets.TokenStreamConfig{BatchSize: c.Batch, BlockSize: c.T, Tile: true})
	if err := cmp.Or(err1, err2); err != nil {
		return err
	}
	recipe := transformer.NanoGPT{Steps: c.Steps, EvalEvery: c.EvalEvery, Warmup: c.Warmup, LR: r.Setting.LR, MinLR: r.Setting.LR / 10,
		Beta1: 0.9, Beta2: c.Beta2, WeightDecay: c.WeightDecay, Clip: c.Clip}
	_, progress := c.Flags.Progress(c.Quiet, c.Progress)
	if _, err := transformer.TrainNanoGPT(ctx, r, m, trainData, valData, recipe, train.Config{Quiet: progress == nil, Progress: progress,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.TrainLoss, e.ValLoss) }}); err != nil || r.Diverged != "" {
		return err // a diverged model has nothing to sample
	}
	// c.SampleLen characters after the first T held-out ones, at
	// c.Temperature, the sampler seeded by -seed for every model.
	text, err := transformer.Continue(model, d.Val[:c.T], c.SampleLen, nn.SampleConfig{Temperature: c.Temperature, Seed: c.Seed})
	r.Vectors["sample"] = experiment.Convert[float64](text)
	return err
}
