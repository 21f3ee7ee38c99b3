package nn_test

// nanoGPT both ways, with the lines a nanoGPT user writes, against
// nn/testdata/nanogpt.py (a module with nanoGPT's state_dict layout) run by
// nn/testdata/nanogpt_run.py. Needs a python3 with torch (Debian:
// python3-torch, 1.13: it registers the attn.bias mask buffers; the
// torch >= 2 layout, without them, is emulated by the script); skipped,
// with a message, without one:
//
//	go test ./nn -run NanoGPT -v

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	"github.com/geluproject/gelu/train/torchtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// nanoArgs are nanoGPT's GPTConfig fields for cfg.
func nanoArgs(cfg nn.GPTConfig) map[string]any {
	return map[string]any{"block_size": cfg.BlockSize, "vocab_size": cfg.VocabSize, "n_layer": cfg.Layers,
		"n_head": cfg.Heads, "n_embd": cfg.Dim, "bias": !cfg.NoBias, "dropout": cfg.Dropout}
}

// runNanoGPT writes job to dir/job.json and runs nanogpt_run.py on dir.
func runNanoGPT(t *testing.T, py, dir string, job map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(job)
	if err := os.WriteFile(filepath.Join(dir, "job.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join("testdata", "nanogpt_run.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("nanogpt_run.py: %v\n%s", err, out)
	}
}

// gptLogits returns m's logits (batch·T × vocab) for ids, in evaluation
// mode.
func gptLogits(t *testing.T, g *graph.Graph, m *nn.GPT, ids [][]int) []float64 {
	t.Helper()
	b, n := len(ids), len(ids[0])
	var flat []float64
	for _, row := range ids {
		for _, id := range row {
			flat = append(flat, float64(id))
		}
	}
	x, err := g.Input(fmt.Sprintf("ids.%d", len(g.Inputs())), b, n)
	if err != nil {
		t.Fatal(err)
	}
	logits, err := m.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	g.SetTraining(false)
	defer g.SetTraining(true)
	return graphtestOutput(t, g, x, logits, denseOf(g.Dtype(), flat, b, n))
}

func graphtestOutput(t *testing.T, g *graph.Graph, x, out *G.Node, xv *tensor.Dense) []float64 {
	t.Helper()
	mc, err := g.Compile(nil, graph.Keep(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.Set(x, xv); err != nil {
		t.Fatal(err)
	}
	if err := mc.Run(); err != nil {
		t.Fatal(err)
	}
	v, err := mc.Value(out)
	if err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(v.(*tensor.Dense))
}

// Two float64 evaluations of the same function with the same weights
// differ by rounding only: each dot product of n ≤ 32 terms by at most
// n·u relative to the sum of its terms' magnitudes (u = 2⁻⁵³ ≈ 1.1e-16),
// through 2 blocks of about ten such operations whose amplification
// (LayerNorm's 1/σ, softmax) is far below 10³ for these weights:
// 10³·32·10·u ≈ 3.6e-11 relative to the logits' scale (at least 1). A
// weight in the wrong place, or missing, moves logits by 1e-3 or more.
const interopTol = 3.6e-11

// (a) A GPT saved by train.SaveWeights loads into nanoGPT's GPT with the
// strict load_state_dict a nanoGPT user writes, on torch 1.13 (masks
// registered: the file needs nn.CausalMaskBuffers) and on torch >= 2 (no
// masks); the other layout is refused by torch itself. (b) nanoGPT's
// state_dict saved as safetensors (the tied lm_head.weight copy and, on
// torch 1.13, the masks) loads with train.LoadWeights. Both ways the
// logits agree; for bias=True and bias=False.
func TestNanoGPTBothWays(t *testing.T) {
	if testing.Short() {
		t.Skip("nanoGPT interop skipped in -short mode (four python runs)")
	}
	py := torchtest.Python(t, "nanoGPT interop")
	ids := [][]int{{1, 4, 0, 3, 3}, {6, 2, 5, 5, 1}}
	for _, torch2 := range []bool{false, true} {
		for _, noBias := range []bool{false, true} {
			t.Run(fmt.Sprintf("torch2=%v/bias=%v", torch2, !noBias), func(t *testing.T) {
				dir := t.TempDir()
				cfg := nn.GPTConfig{NoBias: noBias}
				g, m := kvModel(t, tensor.Float64, cfg, 11) // every weight random, none 0 or 1
				cfg = m.Config
				masks, other := []nn.StateDictOption{nn.CausalMaskBuffers()}, []nn.StateDictOption(nil)
				if torch2 {
					masks, other = other, masks
				}
				if err := train.SaveWeights(filepath.Join(dir, "go.safetensors"), m, masks...); err != nil {
					t.Fatal(err)
				}
				if err := train.SaveWeights(filepath.Join(dir, "go_other.safetensors"), m, other...); err != nil {
					t.Fatal(err)
				}
				runNanoGPT(t, py, dir, map[string]any{"task": "interop", "model_args": nanoArgs(cfg), "torch2": torch2, "ids": ids})
				var res struct {
					Torch            string
					MaskBuffers      bool      `json:"mask_buffers"`
					RealMaskBuffers  bool      `json:"real_mask_buffers"`
					ALogits          []float64 `json:"a_logits"`
					BLogits          []float64 `json:"b_logits"`
					OtherLayoutError string    `json:"other_layout_error"`
				}
				raw, _ := os.ReadFile(filepath.Join(dir, "interop.json"))
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Fatal(err)
				}
				if res.MaskBuffers == torch2 {
					t.Fatalf("the module registers mask buffers: %v, want %v", res.MaskBuffers, !torch2)
				}
				if e := relErr(res.ALogits, gptLogits(t, g, m, ids)); !(e <= interopTol) {
					t.Errorf("(a) nanoGPT's logits with the project's weights differ by %.3g (relative), want ≤ %.2g", e, interopTol)
				}
				if !strings.Contains(res.OtherLayoutError, "attn.bias") {
					t.Errorf("(a) the other torch's layout: torch said %q, want a strict-load error about attn.bias", res.OtherLayoutError)
				}

				nano := filepath.Join(dir, "nano.safetensors")
				f, err := safetensors.Load(nano)
				if err != nil {
					t.Fatal(err)
				}
				_, hasCopy := f.Get("lm_head.weight")
				_, hasMask := f.Get("transformer.h.1.attn.bias")
				if !hasCopy || hasMask == torch2 {
					t.Fatalf("(b) nanoGPT's file has lm_head.weight %v, masks %v; want true, %v", hasCopy, hasMask, !torch2)
				}
				g2, m2 := kvModel(t, tensor.Float64, cfg, 12)
				if err := train.LoadWeights(nano, m2); err != nil {
					t.Fatalf("(b) %v", err)
				}
				if e := relErr(gptLogits(t, g2, m2, ids), res.BLogits); !(e <= interopTol) {
					t.Errorf("(b) the project's logits with nanoGPT's weights differ by %.3g (relative), want ≤ %.2g", e, interopTol)
				}
				t.Logf("PyTorch %s (registers masks itself: %v): logits agree both ways; the other layout: %s", res.Torch, res.RealMaskBuffers, res.OtherLayoutError)
			})
		}
	}
}

// With bias=False the project's GPT trains as nanoGPT's: the same initial
// weights (saved by train.SaveWeights, loaded strictly by the Python
// module), the same batches, 10 steps of AdamW with weight decay and
// gradient clipping in float64, the same losses.
//
// The tolerance is measured, not guessed. The two implementations differ
// only in rounding: in one step the parameters can differ by at most the
// rounding of the longest chain of dependent operations, well under 2¹³
// roundings of u = 2⁻⁵³ each, so by less than δ = 2⁻⁴⁰ relative. How much
// 10 steps amplify such a difference is measured here on the Go side: the
// initial weights perturbed by ±δ (random signs, 4 draws) change the
// per-step losses by at most s (relative). A difference entering at any
// of the 10 steps is amplified at most as much as one entering at the
// first, so the losses may differ by 10·s. (s is large for so small a δ:
// Adam's first steps move each weight by about lr·sign(gradient), and a
// gradient near 0 can change sign.) A loss difference of the size the
// kept LayerNorm biases made (5.8e-5 after 10 steps) must fail it by far:
// the test asserts 10·s < 1e-6.
func TestNanoGPTNoBiasTrainsAsPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("nanoGPT parity skipped in -short mode (one python run)")
	}
	py := torchtest.Python(t, "nanoGPT bias=False parity")
	const steps, lr, wd, clip = 10, 3e-2, 0.1, 0.5
	cfg := nn.GPTConfig{BlockSize: 8, VocabSize: 11, Layers: 2, Heads: 2, Dim: 8, NoBias: true}
	r := rng.New(3, "nanoGPT parity batches")
	var batches []graph.NamedTensor
	for i := range steps {
		x, y := make([]float64, 0, parityBatch*paritySeq), make([]float64, 0, parityBatch*paritySeq)
		for range parityBatch {
			s := r.IntN(cfg.VocabSize)
			for range paritySeq {
				x = append(x, float64(s))
				s = (3*s + 1) % cfg.VocabSize
				y = append(y, float64(s))
			}
		}
		batches = append(batches, graph.NamedTensor{Name: fmt.Sprintf("x.%d", i), Value: denseOf(tensor.Float64, x, parityBatch, paritySeq)},
			graph.NamedTensor{Name: fmt.Sprintf("y.%d", i), Value: denseOf(tensor.Float64, y, parityBatch, paritySeq)})
	}
	// train builds the GPT (the same initial weights every time, from the
	// seed and the names), perturbs them by ±2⁻⁴⁰ relative with the
	// random stream perturb (none for 0), saves them for PyTorch into dir
	// (if not ""), and takes the steps.
	train10 := func(perturb uint64, dir string) []float64 {
		g, _ := graph.New(tensor.Float64, 7)
		m, err := nn.NewGPT(g, "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		ids, _ := g.Input("ids", parityBatch, paritySeq)
		targets, _ := g.Input("targets", parityBatch, paritySeq)
		_, loss, err := m.Loss(ids, targets)
		if err != nil {
			t.Fatal(err)
		}
		if perturb > 0 {
			pr := rng.New(perturb, "perturbation")
			for _, p := range g.ParamTensors() {
				for i, v := range p.Value.Float64s() {
					p.Value.Float64s()[i] = v * (1 + math.Copysign(0x1p-40, pr.Normal()))
				}
			}
		}
		if dir != "" {
			if err := train.SaveWeights(filepath.Join(dir, "init.safetensors"), m); err != nil {
				t.Fatal(err)
			}
		}
		opt := optim.NewAdamW(lr)
		opt.WeightDecay = wd
		losses, _ := torchtest.Train(t, g, ids, targets, loss, batches, opt, clip)
		return losses
	}
	dir := t.TempDir()
	goLosses := train10(0, dir)
	if err := safetensors.Save(filepath.Join(dir, "batches.safetensors"), batches, nil); err != nil {
		t.Fatal(err)
	}
	// The torch >= 2 layout: the file has no masks (TestNanoGPTBothWays
	// covers both layouts).
	runNanoGPT(t, py, dir, map[string]any{"task": "train", "model_args": nanoArgs(cfg), "torch2": true, "steps": steps, "lr": lr,
		"weight_decay": wd, "clip": clip})
	var res torchtest.Result
	raw, _ := os.ReadFile(filepath.Join(dir, "losses.json"))
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Losses) != steps {
		t.Fatalf("losses.json: %v (%d losses, want %d)", err, len(res.Losses), steps)
	}
	spread := 0.0
	for s := uint64(1); s <= 4; s++ {
		for i, l := range train10(s, "") {
			spread = max(spread, math.Abs(l-goLosses[i])/math.Abs(goLosses[i]))
		}
	}
	tol := 10 * spread
	if !(tol > 0 && tol < 1e-6) {
		t.Fatalf("10 steps amplify a 2⁻⁴⁰ perturbation to %.3g: no measure, or too chaotic a trajectory to compare implementations", spread)
	}
	worst := torchtest.CompareLosses(t, goLosses, res.Losses, tol)
	t.Logf("PyTorch %s, bias=False, %d AdamW steps: losses %.6g → %.6g, worst relative difference %.2g, tolerance %.2g (10 × the spread %.2g of a 2⁻⁴⁰ perturbation)",
		res.Torch, steps, goLosses[0], goLosses[steps-1], worst, tol, spread)
}
