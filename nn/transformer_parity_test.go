package nn_test

// PyTorch parity (optional) of GPT and ViT: the same safetensors
// initialization and batches, AdamW with weight decay and gradient-norm
// clipping, 10 steps in float64: the per-step losses agree to 1e-10
// relative; a model initialized by PyTorch loads here and gives its logits
// to 1e-12. The PyTorch models are nn/testdata/gpt_torch.py and
// vit_torch.py, run by train/torchtest. Needs a python3 with torch
// (Debian: python3-torch); skipped, with a message, without one:
//
//	go test ./nn -run PyTorch -v

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/torchtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// parityModel builds a model on a fresh float64 graph seeded by seed and
// returns the graph, its inputs x and y, the output and the loss.
type parityModel func(t *testing.T, seed uint64) (g *graph.Graph, x, y, out, loss *G.Node)

type parityCase struct {
	name   string
	script string
	config map[string]any
	build  parityModel
	batch  func(r *rng.RNG) (x, y *tensor.Dense)
}

func gptParityConfig() nn.GPTConfig {
	return nn.GPTConfig{BlockSize: 8, VocabSize: 11, Layers: 2, Heads: 2, Dim: 8}
}

// gatedParityConfig is untied, with a SwiGLU MLP of GatedHidden(32) = 21.
func gatedParityConfig() nn.GPTConfig {
	return nn.GPTConfig{BlockSize: 8, VocabSize: 11, Layers: 2, Heads: 2, Dim: 8, Gate: nn.SwiGLU, UntieWeights: true}
}

const parityBatch, paritySeq = 3, 6

func buildGPT(t *testing.T, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	return buildGPTWith(t, seed, gptParityConfig())
}

func buildGPTWith(t *testing.T, seed uint64, cfg nn.GPTConfig) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	return gptLoss(t, tensor.Float64, seed, cfg, parityBatch, paritySeq)
}

func vitParityConfig() nn.ViTConfig {
	return nn.ViTConfig{ImageSize: 28, PatchSize: 7, Dim: 8, Heads: 2, Layers: 2, Classes: 10}
}

func buildViT(t *testing.T, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, seed)
	m, err := nn.NewViT(g, "", vitParityConfig())
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", parityBatch, 28*28)
	y, _ := g.Input("y", parityBatch)
	logits, err := m.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	if err != nil {
		t.Fatal(err)
	}
	return g, x, y, logits, loss
}

func ints(r *rng.RNG, n, below int, shape ...int) *tensor.Dense {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(r.IntN(below))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

func TestTransformerAdamWMatchesPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("PyTorch parity skipped in -short mode (three python runs, about 10 s)")
	}
	py := torchtest.Python(t, "PyTorch parity")
	gc, vc, sc := gptParityConfig(), vitParityConfig(), gatedParityConfig()
	common := map[string]any{"steps": 10, "lr": 3e-2, "weight_decay": 0.1, "clip": 0.5}
	gptBatch := func(r *rng.RNG) (*tensor.Dense, *tensor.Dense) {
		// Sequences following s[t+1] = 3·s[t] + 1 mod V from a random
		// start, so that there is something to learn; y is x shifted.
		x, y := make([]float64, 0, parityBatch*paritySeq), make([]float64, 0, parityBatch*paritySeq)
		for b := 0; b < parityBatch; b++ {
			s := r.IntN(gc.VocabSize)
			for i := 0; i < paritySeq; i++ {
				x = append(x, float64(s))
				s = (3*s + 1) % gc.VocabSize
				y = append(y, float64(s))
			}
		}
		return tensor.New(tensor.WithShape(parityBatch, paritySeq), tensor.WithBacking(x)), tensor.New(tensor.WithShape(parityBatch, paritySeq), tensor.WithBacking(y))
	}
	cases := []parityCase{
		{
			name:   "GPT",
			script: "gpt_torch.py",
			config: map[string]any{"vocab": gc.VocabSize, "block_size": gc.BlockSize, "layers": gc.Layers, "heads": gc.Heads, "dim": gc.Dim, "tie": !gc.UntieWeights},
			build:  buildGPT,
			batch:  gptBatch,
		},
		{
			name:   "GPT-SwiGLU-untied",
			script: "gpt_torch.py",
			config: map[string]any{"vocab": sc.VocabSize, "block_size": sc.BlockSize, "layers": sc.Layers, "heads": sc.Heads, "dim": sc.Dim, "tie": false, "gate": "swiglu", "hidden": nn.GatedHidden(4 * sc.Dim)},
			build: func(t *testing.T, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
				return buildGPTWith(t, seed, sc)
			},
			batch: gptBatch,
		},
		{
			name:   "ViT",
			script: "vit_torch.py",
			config: map[string]any{"image": vc.ImageSize, "patch": vc.PatchSize, "dim": vc.Dim, "heads": vc.Heads, "layers": vc.Layers, "classes": vc.Classes},
			build:  buildViT,
			batch: func(r *rng.RNG) (*tensor.Dense, *tensor.Dense) {
				x, _ := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), r, parityBatch, 28*28)
				return x, ints(r, parityBatch, vc.Classes, parityBatch)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range common {
				c.config[k] = v
			}
			steps := c.config["steps"].(int)
			dir := t.TempDir()
			g, x, y, _, loss := c.build(t, 7)
			r := rng.New(3, "transformer parity batches")
			var batches []graph.NamedTensor
			for i := 0; i < steps; i++ {
				bx, by := c.batch(r)
				batches = append(batches, graph.NamedTensor{Name: fmt.Sprintf("x.%d", i), Value: bx}, graph.NamedTensor{Name: fmt.Sprintf("y.%d", i), Value: by})
			}
			torchtest.WriteInputs(t, dir, g, batches, c.config)

			opt := optim.NewAdamW(c.config["lr"].(float64))
			opt.WeightDecay = c.config["weight_decay"].(float64)
			losses, norms := torchtest.Train(t, g, x, y, loss, batches, opt, c.config["clip"].(float64))

			res := torchtest.Run(t, py, filepath.Join("testdata", c.script), dir, steps)
			worst := torchtest.CompareLosses(t, losses, res.Losses, 1e-10)
			if len(res.Norms) != steps {
				t.Fatalf("losses.json: %d gradient norms, want %d", len(res.Norms), steps)
			}
			clipped := 0
			for i := range norms {
				if math.Abs(norms[i]-res.Norms[i]) > 1e-9*res.Norms[i] {
					t.Errorf("step %d: Go gradient norm %.17g, PyTorch %.17g", i, norms[i], res.Norms[i])
				}
				if norms[i] > c.config["clip"].(float64) {
					clipped++
				}
			}
			if clipped == 0 {
				t.Errorf("no step was clipped (norms %v): the test does not exercise clipping", norms)
			}
			t.Logf("PyTorch %s: %d steps (%d clipped), losses %.6g → %.6g, worst relative difference %.2g", res.Torch, steps, clipped, losses[0], losses[steps-1], worst)

			// A model initialized in PyTorch loads here and gives its logits.
			g2, x2, _, out2, _ := c.build(t, 99)
			torchtest.CheckTorchInit(t, dir, g2, x2, out2, batches[0].Value, 1e-12)
		})
	}
}
