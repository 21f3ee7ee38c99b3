package train_test

// PyTorch parity (optional): the FeedForward block, initialized from the
// same safetensors file and trained on the same batches with the same
// SGD-momentum settings in float64, gives PyTorch's per-step losses. Needs a
// python3 with torch (Debian: apt-get install python3-torch); skipped, with
// a message, without one. Run it alone with
//
//	go test ./train -run PyTorch -v

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
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/safetensors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// torchPython returns a python3 that can import torch and numpy, or skips.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import torch, numpy").Run() == nil {
			return py
		}
	}
	t.Skip("PyTorch parity skipped: no python3 with torch and numpy (install with: apt-get install python3-torch)")
	return ""
}

type parityConfig struct {
	Dim         int     `json:"dim"`
	Hidden      int     `json:"hidden"`
	Steps       int     `json:"steps"`
	PostLN      bool    `json:"post_ln"`
	Activation  string  `json:"activation"`
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	Dampening   float64 `json:"dampening"`
	Nesterov    bool    `json:"nesterov"`
	WeightDecay float64 `json:"weight_decay"`
}

func buildFFN(t *testing.T, c parityConfig, rows int, seed uint64) (*graph.Graph, *G.Node, *G.Node, *G.Node, *G.Node) {
	t.Helper()
	act, err := activation.ParseActivation(c.Activation)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := graph.New(tensor.Float64, seed)
	ffn, err := nn.NewFeedForward(g, "", nn.FeedForwardConfig{Dim: c.Dim, Hidden: c.Hidden, Activation: act, PostLN: c.PostLN})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", rows, c.Dim)
	y, _ := g.Input("y", rows, c.Dim)
	out, err := ffn.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := nn.MSELoss(out, y)
	if err != nil {
		t.Fatal(err)
	}
	return g, x, y, out, loss
}

func TestFeedForwardSGDMatchesPyTorch(t *testing.T) {
	py := torchPython(t)
	const rows = 16
	for _, c := range []parityConfig{
		{Dim: 8, Hidden: 32, Steps: 25, Activation: "gelu", LR: 0.05, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3},
		{Dim: 6, Hidden: 24, Steps: 25, Activation: "gelu_tanh", PostLN: true, LR: 0.1, Momentum: 0.9, Dampening: 0.9},
	} {
		t.Run(fmt.Sprintf("%s_postLN=%v", c.Activation, c.PostLN), func(t *testing.T) {
			dir := t.TempDir()
			g, x, y, out, loss := buildFFN(t, c, rows, 7)
			if err := train.SaveWeights(filepath.Join(dir, "init.safetensors"), g); err != nil {
				t.Fatal(err)
			}
			r := rng.New(3, "parity batches")
			var batches []graph.NamedTensor
			for i := 0; i < c.Steps; i++ {
				for _, name := range []string{"x", "y"} {
					v := make([]float64, rows*c.Dim)
					for j := range v {
						v[j] = r.Normal()
					}
					batches = append(batches, graph.NamedTensor{Name: fmt.Sprintf("%s.%d", name, i), Value: tensor.New(tensor.WithShape(rows, c.Dim), tensor.WithBacking(v))})
				}
			}
			if err := safetensors.Save(filepath.Join(dir, "batches.safetensors"), batches, nil); err != nil {
				t.Fatal(err)
			}
			cfgJSON, _ := json.Marshal(c)
			os.WriteFile(filepath.Join(dir, "config.json"), cfgJSON, 0o644)

			m, err := g.Compile(loss)
			if err != nil {
				t.Fatal(err)
			}
			opt := &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum, Dampening: c.Dampening, Nesterov: c.Nesterov, WeightDecay: c.WeightDecay}
			params := g.ParamTensors()
			var goLosses []float64
			for i := 0; i < c.Steps; i++ {
				m.Set(x, batches[2*i].Value)
				m.Set(y, batches[2*i+1].Value)
				if err := m.Run(); err != nil {
					t.Fatal(err)
				}
				l, _ := m.Loss()
				goLosses = append(goLosses, l)
				grads, _ := m.Grads()
				if err := opt.Step(params, grads); err != nil {
					t.Fatal(err)
				}
			}

			cmd := exec.Command(py, "testdata/torch_parity.py", dir)
			if outp, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("torch_parity.py: %v\n%s", err, outp)
			}
			var res struct {
				Losses []float64 `json:"losses"`
				Torch  string    `json:"torch"`
			}
			raw, _ := os.ReadFile(filepath.Join(dir, "losses.json"))
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Losses) != c.Steps {
				t.Fatalf("losses.json: %v (%d losses)", err, len(res.Losses))
			}
			worst := 0.0
			for i := range goLosses {
				rel := math.Abs(goLosses[i]-res.Losses[i]) / math.Abs(res.Losses[i])
				worst = math.Max(worst, rel)
				if rel > 1e-10 {
					t.Errorf("step %d: Go loss %.17g, PyTorch %.17g (relative difference %.2g)", i, goLosses[i], res.Losses[i], rel)
				}
			}
			t.Logf("PyTorch %s: %d steps, losses %.6g → %.6g, worst relative difference %.2g", res.Torch, c.Steps, goLosses[0], goLosses[c.Steps-1], worst)

			// A model initialized in PyTorch loads here and computes the same output.
			g2, x2, _, out2, _ := buildFFN(t, c, rows, 99)
			if err := train.LoadWeights(filepath.Join(dir, "torch_init.safetensors"), g2); err != nil {
				t.Fatal(err)
			}
			m2, err := g2.Compile(nil, graph.Keep(out2))
			if err != nil {
				t.Fatal(err)
			}
			m2.Set(x2, batches[0].Value)
			if err := m2.Run(); err != nil {
				t.Fatal(err)
			}
			var fwd struct{ Output []float64 }
			raw, _ = os.ReadFile(filepath.Join(dir, "torch_forward.json"))
			json.Unmarshal(raw, &fwd)
			v, _ := m2.Value(out2)
			got := v.(*tensor.Dense).Float64s()
			if len(got) != len(fwd.Output) {
				t.Fatalf("output has %d values, PyTorch %d", len(got), len(fwd.Output))
			}
			for i := range got {
				if math.Abs(got[i]-fwd.Output[i]) > 1e-12*math.Max(1, math.Abs(fwd.Output[i])) {
					t.Fatalf("output[%d] = %.17g, PyTorch %.17g", i, got[i], fwd.Output[i])
				}
			}
			_ = out
		})
	}
}
