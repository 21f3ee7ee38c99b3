package nn_test

// PyTorch parity of bfloat16 autocast (optional): the FFN block (SGD with
// momentum, MSE) and a GPT (AdamW, cross-entropy), built in float32 from
// the same weights and trained on the same batches for 100 steps, here
// with and without graph.SetAutocast(BFloat16), in PyTorch
// (nn/testdata/autocast_torch.py) in float32, under torch.autocast("cpu",
// dtype=torch.bfloat16), and with every product's operands rounded to
// bfloat16 by hand ("emulate": what SetAutocast computes). Needs a python3
// with torch; skipped without one, and in -short mode:
//
//	go test ./nn -run Autocast -v

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

// autocastSteps is the length of each training run compared.
const autocastSteps = 100

// The tolerances, relative.
//
// Step 0 (the same weights and batch on both sides): SetAutocast(BFloat16)
// against PyTorch's emulation of it, and float32 against float32, round
// the same operands the same way and differ only in the order of their
// float32 sums: about 10⁻⁷ in the loss. The gradients also pass through
// bfloat16 roundings of results that differ in their last bit, which
// sometimes land on the other bfloat16 neighbour: 10⁻⁵ for the gradient
// norm. Rounding the operands to bfloat16 moves the step-0 loss by 4·10⁻⁶
// (GPT) and 10⁻⁵ (FFN) at these sizes, and the GPT's gradient norm by
// 5·10⁻⁵: a product left in float32 on either side fails (the test checks
// that the float32 run is outside the tolerance of the emulation).
//
// Over 100 steps the same neighbour flips make the two bfloat16 runs
// part, by about a bfloat16 rounding (u = 2⁻⁸) of one activation's share
// of the loss each time: autocastTolSteps = u/2. Float32 runs do not flip
// and stay within autocastTolF32.
//
// Against torch.autocast itself: both round the products' operands to
// bfloat16, but PyTorch also rounds each product's result, and the GELU
// and softmax it computes on them, to bfloat16, which this project keeps
// in float32: each activation differs by up to u between the two, and the
// loss, a mean over many activations, by a fraction of that, carried along
// 100 steps. The tolerance is 4u = 2⁻⁶ ≈ 1.6%.
const (
	autocastTolLoss0    = 1e-6
	autocastTolNorm0    = 1e-5
	autocastTolF32      = 1e-4
	autocastTolSteps    = 0x1p-9
	autocastTolAutocast = 0x1p-6
)

type autocastCase struct {
	name    string
	config  map[string]any
	build   func(t *testing.T) (g *graph.Graph, x, y, loss *G.Node)
	batches func(r *rng.RNG) (x, y *tensor.Dense)
	opt     func() optim.Optimizer
}

func TestAutocastMatchesPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("PyTorch autocast parity skipped in -short mode (four trainings of 100 steps)")
	}
	py := torchtest.Python(t, "PyTorch autocast parity")
	const rows, dim, hidden = 64, 64, 256
	gc := nn.GPTConfig{BlockSize: 16, VocabSize: 32, Layers: 2, Heads: 4, Dim: 32}
	const gptBatch = 8
	cases := []autocastCase{
		{
			name:   "FFN",
			config: map[string]any{"model": "ffn", "dim": dim, "hidden": hidden, "lr": 0.05, "momentum": 0.9},
			build: func(t *testing.T) (*graph.Graph, *G.Node, *G.Node, *G.Node) {
				g, _ := graph.New(tensor.Float32, 7)
				ffn, err := nn.NewFeedForward(g, "", nn.FeedForwardConfig{Dim: dim, Hidden: hidden})
				if err != nil {
					t.Fatal(err)
				}
				x, _ := g.Input("x", rows, dim)
				y, _ := g.Input("y", rows, dim)
				out, err := ffn.Forward(x)
				if err != nil {
					t.Fatal(err)
				}
				loss, err := nn.MSELoss(out, y)
				if err != nil {
					t.Fatal(err)
				}
				return g, x, y, loss
			},
			// A teacher to learn: y = tanh(x·A) for a fixed A.
			batches: func() func(r *rng.RNG) (*tensor.Dense, *tensor.Dense) {
				a := make([]float64, dim*dim)
				ra := rng.New(5, "teacher")
				for i := range a {
					a[i] = ra.Normal() / math.Sqrt(dim)
				}
				return func(r *rng.RNG) (*tensor.Dense, *tensor.Dense) {
					x, y := make([]float32, rows*dim), make([]float32, rows*dim)
					for i := range x {
						x[i] = float32(r.Normal())
					}
					for i := range rows {
						for j := range dim {
							s := 0.0
							for k := range dim {
								s += float64(x[i*dim+k]) * a[k*dim+j]
							}
							y[i*dim+j] = float32(math.Tanh(s))
						}
					}
					return tensor.New(tensor.WithShape(rows, dim), tensor.WithBacking(x)), tensor.New(tensor.WithShape(rows, dim), tensor.WithBacking(y))
				}
			}(),
			opt: func() optim.Optimizer { return &optim.SGD{LearningRate: 0.05, Momentum: 0.9} },
		},
		{
			name: "GPT",
			config: map[string]any{"model": "gpt", "vocab": gc.VocabSize, "block_size": gc.BlockSize, "layers": gc.Layers,
				"heads": gc.Heads, "dim": gc.Dim, "tie": true, "lr": 3e-3, "weight_decay": 0.01},
			build: func(t *testing.T) (*graph.Graph, *G.Node, *G.Node, *G.Node) {
				g, ids, targets, _, loss := gptLoss(t, tensor.Float32, 7, gc, gptBatch, gc.BlockSize)
				return g, ids, targets, loss
			},
			// Sequences following s[t+1] = 3·s[t] + 1 mod V from a random
			// start; y is x shifted.
			batches: func(r *rng.RNG) (*tensor.Dense, *tensor.Dense) {
				x, y := make([]float32, 0, gptBatch*gc.BlockSize), make([]float32, 0, gptBatch*gc.BlockSize)
				for range gptBatch {
					s := r.IntN(gc.VocabSize)
					for range gc.BlockSize {
						x = append(x, float32(s))
						s = (3*s + 1) % gc.VocabSize
						y = append(y, float32(s))
					}
				}
				return tensor.New(tensor.WithShape(gptBatch, gc.BlockSize), tensor.WithBacking(x)), tensor.New(tensor.WithShape(gptBatch, gc.BlockSize), tensor.WithBacking(y))
			},
			opt: func() optim.Optimizer {
				o := optim.NewAdamW(3e-3)
				o.WeightDecay = 0.01
				return o
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rng.New(3, "autocast parity batches")
			var batches []graph.NamedTensor
			for i := range autocastSteps {
				bx, by := c.batches(r)
				batches = append(batches, graph.NamedTensor{Name: fmt.Sprintf("x.%d", i), Value: bx}, graph.NamedTensor{Name: fmt.Sprintf("y.%d", i), Value: by})
			}
			goLosses, goNorms := map[graph.Precision][]float64{}, map[graph.Precision][]float64{}
			for _, p := range []graph.Precision{graph.Full, graph.BFloat16} {
				g, x, y, loss := c.build(t)
				if err := g.SetAutocast(p); err != nil {
					t.Fatal(err)
				}
				goLosses[p], goNorms[p] = torchtest.Train(t, g, x, y, loss, batches, c.opt(), math.Inf(1))
			}
			torchLosses, torchNorms := map[string][]float64{}, map[string][]float64{}
			for _, mode := range []string{"none", "autocast", "emulate"} {
				g, _, _, _ := c.build(t) // the initial weights
				cfg := map[string]any{"steps": autocastSteps, "mode": mode}
				for k, v := range c.config {
					cfg[k] = v
				}
				dir := t.TempDir()
				torchtest.WriteInputs(t, dir, g, batches, cfg)
				res := torchtest.Run(t, py, filepath.Join("testdata", "autocast_torch.py"), dir, autocastSteps)
				torchLosses[mode], torchNorms[mode] = res.Losses, res.Norms
			}
			f32, bf16 := goLosses[graph.Full], goLosses[graph.BFloat16]
			rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Abs(b) }
			for _, c := range []struct {
				what      string
				got, want float64
				tol       float64
			}{
				{"float32 loss", f32[0], torchLosses["none"][0], autocastTolLoss0},
				{"float32 gradient norm", goNorms[graph.Full][0], torchNorms["none"][0], autocastTolLoss0},
				{"bfloat16 loss", bf16[0], torchLosses["emulate"][0], autocastTolLoss0},
				{"bfloat16 gradient norm", goNorms[graph.BFloat16][0], torchNorms["emulate"][0], autocastTolNorm0},
			} {
				if r := rel(c.got, c.want); !(r <= c.tol) {
					t.Errorf("step 0: %s %.9g, PyTorch %.9g: relative difference %.2g, want ≤ %.2g", c.what, c.got, c.want, r, c.tol)
				}
			}
			if r := rel(f32[0], torchLosses["emulate"][0]); r <= autocastTolLoss0 {
				t.Errorf("step 0: the float32 loss is within %.2g of PyTorch's bfloat16 emulation (%.2g): this test cannot tell them apart", autocastTolLoss0, r)
			}
			worstF32 := torchtest.CompareLosses(t, f32, torchLosses["none"], autocastTolF32)
			worstEmulated := torchtest.CompareLosses(t, bf16, torchLosses["emulate"], autocastTolSteps)
			worstAutocast := torchtest.CompareLosses(t, bf16, torchLosses["autocast"], autocastTolAutocast)
			effect := 0.0 // how far autocast moves PyTorch's losses
			for i, l := range torchLosses["none"] {
				effect = math.Max(effect, rel(torchLosses["autocast"][i], l))
			}
			t.Logf("%d steps, losses %.4g → %.4g (float32) and %.4g → %.4g (bfloat16). Step 0, bfloat16 against PyTorch's emulation: loss %.2g, gradient norm %.2g (float32 against it: %.2g, %.2g). Largest relative difference over the steps: %.2g in float32, %.2g from the emulation, %.2g from torch.autocast (tolerance %.2g), which moves PyTorch's own losses by up to %.2g",
				autocastSteps, f32[0], f32[autocastSteps-1], bf16[0], bf16[autocastSteps-1],
				rel(bf16[0], torchLosses["emulate"][0]), rel(goNorms[graph.BFloat16][0], torchNorms["emulate"][0]),
				rel(f32[0], torchLosses["emulate"][0]), rel(goNorms[graph.Full][0], torchNorms["emulate"][0]),
				worstF32, worstEmulated, worstAutocast, autocastTolAutocast, effect)
		})
	}
}
