package train_test

// PyTorch parity (optional): the FeedForward block, initialized from the
// same safetensors file and trained on the same batches with the same
// SGD-momentum settings in float64, gives PyTorch's per-step losses. Needs a
// python3 with torch (Debian: apt-get install python3-torch); skipped, with
// a message, without one. Run it alone with
//
//	go test ./train -run PyTorch -v

import (
	"fmt"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/torchtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

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
	py := torchtest.Python(t, "PyTorch parity")
	const rows = 16
	for _, c := range []parityConfig{
		{Dim: 8, Hidden: 32, Steps: 25, Activation: "gelu", LR: 0.05, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3},
		{Dim: 6, Hidden: 24, Steps: 25, Activation: "gelu_tanh", PostLN: true, LR: 0.1, Momentum: 0.9, Dampening: 0.9},
	} {
		t.Run(fmt.Sprintf("%s_postLN=%v", c.Activation, c.PostLN), func(t *testing.T) {
			dir := t.TempDir()
			g, x, y, _, loss := buildFFN(t, c, rows, 7)
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
			torchtest.WriteInputs(t, dir, g, batches, c)

			opt := &optim.SGD{LearningRate: c.LR, Momentum: c.Momentum, Dampening: c.Dampening, Nesterov: c.Nesterov, WeightDecay: c.WeightDecay}
			goLosses, _ := torchtest.Train(t, g, x, y, loss, batches, opt, 0)

			res := torchtest.Run(t, py, "testdata/torch_parity.py", dir, c.Steps)
			worst := torchtest.CompareLosses(t, goLosses, res.Losses, 1e-10)
			t.Logf("PyTorch %s: %d steps, losses %.6g → %.6g, worst relative difference %.2g", res.Torch, c.Steps, goLosses[0], goLosses[c.Steps-1], worst)

			// A model initialized in PyTorch loads here and computes the same output.
			g2, x2, _, out2, _ := buildFFN(t, c, rows, 99)
			torchtest.CheckTorchInit(t, dir, g2, x2, out2, batches[0].Value, 1e-12)
		})
	}
}
