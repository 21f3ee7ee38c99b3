package nn_test

// PyTorch parity (optional) of GPT and ViT: the same safetensors
// initialization and batches, AdamW with weight decay and gradient-norm
// clipping, 10 steps in float64: the per-step losses agree to 1e-10
// relative; a model initialized by PyTorch loads here and gives its logits
// to 1e-12. The PyTorch models are nn/testdata/gpt_torch.py and
// vit_torch.py. Needs /usr/bin/python3 with torch (Debian: python3-torch);
// skipped, with a message, without one:
//
//	go test ./nn -run PyTorch -v

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func torchPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("PyTorch parity skipped: /usr/bin/python3 cannot import torch and numpy (Debian: apt-get install python3-torch)")
	}
	return py
}

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
	return nn.GPTConfig{BlockSize: 8, VocabSize: 11, Layers: 2, Heads: 2, Dim: 8, TieWeights: true}
}

// gatedParityConfig is untied, with a SwiGLU MLP of GatedHidden(32) = 21.
func gatedParityConfig() nn.GPTConfig {
	return nn.GPTConfig{BlockSize: 8, VocabSize: 11, Layers: 2, Heads: 2, Dim: 8, Gate: nn.SwiGLU}
}

const parityBatch, paritySeq = 3, 6

func buildGPT(t *testing.T, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	return buildGPTWith(t, seed, gptParityConfig())
}

func buildGPTWith(t *testing.T, seed uint64, cfg nn.GPTConfig) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, seed)
	m, err := nn.NewGPT(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", parityBatch, paritySeq)
	y, _ := g.Input("y", parityBatch, paritySeq)
	logits, loss, err := m.Loss(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return g, x, y, logits, loss
}

func vitParityConfig() nn.ViTConfig {
	return nn.ViTConfig{ImageSize: 28, PatchSize: 7, Dim: 8, Heads: 2, Layers: 2, Classes: 10}
}

func buildViT(t *testing.T, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	t.Helper()
	g, _ := graph.New(tensor.Float64, seed)
	m, err := nn.NewViT(g, vitParityConfig())
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
	py := torchPython(t)
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
			config: map[string]any{"vocab": gc.VocabSize, "block_size": gc.BlockSize, "layers": gc.Layers, "heads": gc.Heads, "dim": gc.Dim, "tie": gc.TieWeights},
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
			if err := train.SaveWeights(filepath.Join(dir, "init.safetensors"), g); err != nil {
				t.Fatal(err)
			}
			r := rng.New(3, "transformer parity batches")
			var batches []graph.NamedTensor
			for i := 0; i < steps; i++ {
				bx, by := c.batch(r)
				batches = append(batches, graph.NamedTensor{Name: fmt.Sprintf("x.%d", i), Value: bx}, graph.NamedTensor{Name: fmt.Sprintf("y.%d", i), Value: by})
			}
			if err := safetensors.Save(filepath.Join(dir, "batches.safetensors"), batches, nil); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(c.config)
			if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}

			m, err := g.Compile(loss)
			if err != nil {
				t.Fatal(err)
			}
			opt := optim.NewAdamW(c.config["lr"].(float64))
			opt.WeightDecay = c.config["weight_decay"].(float64)
			params := g.ParamTensors()
			var losses, norms []float64
			for i := 0; i < steps; i++ {
				if err := m.Set(x, batches[2*i].Value); err != nil {
					t.Fatal(err)
				}
				if err := m.Set(y, batches[2*i+1].Value); err != nil {
					t.Fatal(err)
				}
				if err := m.Run(); err != nil {
					t.Fatal(err)
				}
				l, _ := m.Loss()
				grads, _ := m.Grads()
				norm, err := optim.ClipGradNorm(grads, c.config["clip"].(float64))
				if err != nil {
					t.Fatal(err)
				}
				if err := opt.Step(params, grads); err != nil {
					t.Fatal(err)
				}
				losses, norms = append(losses, l), append(norms, norm)
			}

			out, err := exec.Command(py, filepath.Join("testdata", c.script), dir).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.script, err, out)
			}
			var res struct {
				Losses, Norms []float64
				Torch         string
			}
			raw, _ = os.ReadFile(filepath.Join(dir, "losses.json"))
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Losses) != steps {
				t.Fatalf("losses.json: %v (%d losses)", err, len(res.Losses))
			}
			worst, clipped := 0.0, 0
			for i := range losses {
				rel := math.Abs(losses[i]-res.Losses[i]) / math.Abs(res.Losses[i])
				worst = math.Max(worst, rel)
				if rel > 1e-10 {
					t.Errorf("step %d: Go loss %.17g, PyTorch %.17g (relative difference %.2g)", i, losses[i], res.Losses[i], rel)
				}
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
			if err := train.LoadWeights(filepath.Join(dir, "torch_init.safetensors"), g2); err != nil {
				t.Fatal(err)
			}
			m2, err := g2.Compile(nil, graph.Keep(out2))
			if err != nil {
				t.Fatal(err)
			}
			if err := m2.Set(x2, batches[0].Value); err != nil {
				t.Fatal(err)
			}
			if err := m2.Run(); err != nil {
				t.Fatal(err)
			}
			var fwd struct{ Output []float64 }
			raw, _ = os.ReadFile(filepath.Join(dir, "torch_forward.json"))
			if err := json.Unmarshal(raw, &fwd); err != nil {
				t.Fatal(err)
			}
			v, _ := m2.Value(out2)
			got := v.(*tensor.Dense).Float64s()
			if len(got) != len(fwd.Output) {
				t.Fatalf("logits have %d values, PyTorch %d", len(got), len(fwd.Output))
			}
			worstFwd := 0.0
			for i := range got {
				d := math.Abs(got[i]-fwd.Output[i]) / math.Max(1, math.Abs(fwd.Output[i]))
				worstFwd = math.Max(worstFwd, d)
			}
			if worstFwd > 1e-12 {
				t.Errorf("PyTorch-initialized logits differ by %.2g (relative, floor 1)", worstFwd)
			}
			t.Logf("PyTorch-initialized model: %d logits, worst difference %.2g", len(got), worstFwd)
		})
	}
}
