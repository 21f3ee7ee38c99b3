package train_test

import (
	"context"
	"fmt"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// The README's own model: nanoGPT's baby GPT on any text file, with
// nanoGPT's optimizer groups, clipping and checkpoints. Module makes
// model.safetensors the GPT's state dict, which nanoGPT's strict
// load_state_dict reads on torch ≥ 2 (for torch 1.x add
// StateDict: []nn.StateDictOption{nn.CausalMaskBuffers()}, as Example
// (CharGPT) does). (No Output comment: `go test` compiles it;
// TestCharGPTExampleLearns trains the same recipe, smaller, and checks
// that the validation loss falls.)
func Example_ownModel() {
	text, _ := datasets.LoadText("input.txt")
	vocab, _ := datasets.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	trainIDs, valIDs, _ := datasets.SplitTokens(ids, 0.1) // the last 10% held out
	trainData, _ := datasets.NewTokenStream(trainIDs, datasets.TokenStreamConfig{BatchSize: 12, BlockSize: 64, Seed: 1})
	valData, _ := datasets.NewTokenStream(valIDs, datasets.TokenStreamConfig{BatchSize: 12, BlockSize: 64, Tile: true})
	g, _ := graph.New(tensor.Float32, 1337) // the seed fixes the weights and dropout masks
	gpt, _ := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: 64, VocabSize: vocab.Size(), Layers: 4, Heads: 4, Dim: 128})
	x, _ := g.Input("x", 12, 64) // 12 windows of 64 token ids
	y, _ := g.Input("y", 12, 64) // the next id after each
	logits, loss, _ := gpt.Loss(x, y)
	opt := optim.NanoGPTAdamW(g.ParamTensors(), 1e-3, 0.1) // decay on matrices only, betas (0.9, 0.95)

	model := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Module: gpt} // its files load into nanoGPT (torch ≥ 2)
	t, _ := train.New(model, opt, trainData, valData, train.Config{MaxSteps: 2000, EvalEvery: 250, ClipNorm: 1, Dir: "out/char", Resume: true})
	res, err := t.Run(context.Background())  // a canceled context (Ctrl-C) writes a checkpoint, then stops
	fmt.Println(res.Best, res.BestStep, err) // the best validation loss and its step
}
