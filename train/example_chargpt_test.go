package train_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// charGPT trains a character-level GPT on the text file at path, as
// nanoGPT's shakespeare_char recipe does on a CPU (its optimizer groups,
// betas, clipping, warmup and cosine decay), and samples from it.
// shape sets n_layer, n_head and n_embd; dir keeps the metrics, the
// checkpoints (a second call resumes) and best.safetensors.
func charGPT(ctx context.Context, path, dir string, steps int, shape nn.GPTConfig) (train.Result, string, error) {
	text, err := datasets.LoadText(path)
	if err != nil {
		return train.Result{}, "", err
	}
	vocab, _ := datasets.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	trainIDs, valIDs, err1 := datasets.SplitTokens(ids, 0.1) // the last 10% held out
	const batch, block = 12, 64                              // batch_size, block_size
	trainData, err2 := datasets.NewTokenStream(trainIDs, datasets.TokenStreamConfig{BatchSize: batch, BlockSize: block, Seed: 1})
	valData, err3 := datasets.NewTokenStream(valIDs, datasets.TokenStreamConfig{BatchSize: batch, BlockSize: block, Tile: true})
	if err := errors.Join(err1, err2, err3); err != nil {
		return train.Result{}, "", err
	}

	g, _ := graph.New(tensor.Float32, 1337)
	shape.BlockSize, shape.VocabSize = block, vocab.Size()
	gpt, err := nn.NewGPT(g, "", shape)
	if err != nil {
		return train.Result{}, "", err
	}
	x, _ := g.Input("x", batch, block) // token ids
	y, _ := g.Input("y", batch, block) // the next token of each
	logits, loss, err := gpt.Loss(x, y)
	if err != nil {
		return train.Result{}, "", err
	}
	opt := optim.NanoGPTAdamW(g.ParamTensors(), 1e-3, 0.1) // decay 0.1 on matrices only, betas (0.9, 0.95)
	// shakespeare_char's beta2: nanoGPT raises it to 0.99 there because a
	// step of 12 windows of 64 characters sees few tokens.
	opt.Beta2 = 0.99
	sched, _ := optim.Cosine(1e-3, steps, 1e-4)
	sched, _ = optim.Warmup(sched, steps/20)
	// Module: model.safetensors and best.safetensors are the GPT's state
	// dict, which nanoGPT's strict load_state_dict reads (torch 1.x also
	// wants its mask buffers: nn.CausalMaskBuffers()).
	model := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Module: gpt,
		StateDict: []nn.StateDictOption{nn.CausalMaskBuffers()}}
	t, err := train.New(model, opt, trainData, valData,
		train.Config{MaxSteps: steps, EvalEvery: steps / 8, EvalAtStart: true, ClipNorm: 1, Schedule: sched, Dir: dir, Resume: true, SaveBest: true})
	if err != nil {
		return train.Result{}, "", err
	}
	res, err := t.Run(ctx) // Ctrl-C: a checkpoint to resume from
	if err != nil {
		return res, "", err
	}
	next, _ := gpt.NextToken()
	sampler, _ := nn.NewSampler(nn.SampleConfig{Temperature: 0.8, Seed: 1})
	sample, err := nn.Generate(next, ids[:1], 200, sampler)
	if err != nil {
		return res, "", err
	}
	s, err := vocab.Decode(sample)
	return res, s, err
}

// A character-level GPT on any text: nanoGPT's baby GPT (4 layers, 4
// heads, width 128, context 64) trained for 2000 steps.
func Example_charGPT() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, sample, err := charGPT(ctx, "input.txt", "out/char-gpt", 2000, nn.GPTConfig{Layers: 4, Heads: 4, Dim: 128})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("validation loss %.3f at step %d\n%s\n", res.Best, res.BestStep, sample)
}
