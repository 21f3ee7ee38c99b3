package train_test

// The Trainer and the loop the package docs show (m.Set, m.Run, opt.Step)
// train a model with dropout to the same parameters, bit for bit: the
// graph's step keys the masks, and every training Run advances it.

import (
	"context"
	"math"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dropoutMLP builds an MLP with heavy dropout on a new graph of seed 11.
func dropoutMLP(t *testing.T, dt tensor.Dtype) (g *graph.Graph, x, y, out, loss *G.Node) {
	t.Helper()
	g, err := graph.New(dt, 11)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 4, Hidden: []int{32, 32}, Out: 2, Dropout: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	x, _ = g.Input("x", batch, 4)
	y, _ = g.Input("y", batch, 2)
	if out, err = mlp.Forward(x); err != nil {
		t.Fatal(err)
	}
	if loss, err = nn.MSELoss(out, y); err != nil {
		t.Fatal(err)
	}
	return g, x, y, out, loss
}

func TestHandWrittenLoopMatchesTrainer(t *testing.T) {
	const steps = 6
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			loader, err := datasets.NewLoader(regressionData(1), datasets.LoaderConfig{BatchSize: batch, Shuffle: true, Seed: 5, DropLast: true, Dtype: dt})
			if err != nil {
				t.Fatal(err)
			}
			g, x, y, out, loss := dropoutMLP(t, dt)
			tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss, Task: train.Regression},
				optim.NewAdamW(1e-2), loader, nil, train.Config{MaxSteps: steps, Quiet: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}

			h, hx, hy, _, hloss := dropoutMLP(t, dt)
			m, err := h.Compile(hloss)
			if err != nil {
				t.Fatal(err)
			}
			opt, params := optim.NewAdamW(1e-2), h.ParamTensors()
			for s := 0; s < steps; s++ {
				b, err := loader.Batch(s/loader.NumBatches(), s%loader.NumBatches())
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Set(hx, b.X); err != nil {
					t.Fatal(err)
				}
				if err := m.Set(hy, b.Y); err != nil {
					t.Fatal(err)
				}
				if err := m.Run(); err != nil {
					t.Fatal(err)
				}
				grads, err := m.Grads()
				if err != nil {
					t.Fatal(err)
				}
				if err := opt.Step(params, grads); err != nil {
					t.Fatal(err)
				}
			}

			for i, p := range g.ParamTensors() {
				want, got := graph.Float64s(p.Value), graph.Float64s(params[i].Value)
				for j := range want {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Errorf("%s[%d]: the hand-written loop gives %v, the Trainer %v", p.Name, j, got[j], want[j])
						break
					}
				}
			}
		})
	}
}
