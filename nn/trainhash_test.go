package nn_test

// TestTrainingHashes compares training between two commits bit for bit: it
// trains small GPTs (float32 and float64, plain and recomputed), a ViT, a
// padded Transformer block, a feed-forward block and an MLP, all with
// dropout, for a few AdamW steps and hashes (SHA-256) every parameter,
// every step's loss and an evaluation loss. Run it on one commit with
//
//	GELU_TRAIN_HASHES=write:/tmp/hashes go test ./nn -run TestTrainingHashes
//
// and on another with check:/tmp/hashes: a change that was meant to move
// memory around and not results fails it, naming the model. The bits
// depend on the GEMM backend and the CPU's kernels, so the two runs belong
// on one machine; without the variable the test is skipped.
//
// The loop sets the step before every Run (as the Trainer does), so it
// draws the same masks whether or not Run advances the step itself.

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// hashModel is one model to train: build adds it to g with its inputs and
// returns the loss and the input values to bind.
type hashModel struct {
	name  string
	build func(g *graph.Graph) (loss *G.Node, inputs map[*G.Node]*tensor.Dense, err error)
}

func hashModels() []hashModel {
	var ms []hashModel
	// The larger GPT's loops and products are split among cores.
	for _, size := range []struct{ batch, t, dim int }{{3, 16, 32}, {8, 64, 128}} {
		for _, recompute := range []bool{false, true} {
			ms = append(ms, gptHashModel(size.batch, size.t, size.dim, recompute))
		}
	}
	ms = append(ms,
		hashModel{"vit", func(g *graph.Graph) (*G.Node, map[*G.Node]*tensor.Dense, error) {
			const batch = 4
			v, err := nn.NewViT(g, "", nn.ViTConfig{ImageSize: 8, PatchSize: 4, Dim: 16, Heads: 2, Layers: 2, Classes: 3, Dropout: 0.1})
			if err != nil {
				return nil, nil, err
			}
			images, _ := g.Input("images", batch, 64)
			labels, _ := g.Input("labels", batch)
			logits, err := v.Forward(images)
			if err != nil {
				return nil, nil, err
			}
			loss, err := nn.CrossEntropyLoss(logits, labels)
			return loss, map[*G.Node]*tensor.Dense{images: normal(g.Dtype(), "images", batch, 64), labels: tokens(g.Dtype(), "labels", 3, batch)}, err
		}},
		hashModel{"padded block", func(g *graph.Graph) (*G.Node, map[*G.Node]*tensor.Dense, error) {
			const batch, t, d = 2, 5, 16
			b, err := nn.NewBlock(g, "block", nn.BlockConfig{Dim: d, Heads: 2, Dropout: 0.2})
			if err != nil {
				return nil, nil, err
			}
			x, _ := g.Input("x", batch, t, d)
			pad, _ := g.Input("pad", batch, t)
			target, _ := g.Input("target", batch, t, d)
			y, err := b.ForwardPadded(x, pad)
			if err != nil {
				return nil, nil, err
			}
			loss, err := nn.MSELoss(y, target)
			pv, _ := graph.FromFloat64s(g.Dtype(), []float64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, batch, t)
			return loss, map[*G.Node]*tensor.Dense{x: normal(g.Dtype(), "x", batch, t, d), pad: pv, target: normal(g.Dtype(), "target", batch, t, d)}, err
		}},
		hashModel{"ffn", func(g *graph.Graph) (*G.Node, map[*G.Node]*tensor.Dense, error) {
			f, err := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: 16, Hidden: 64, Dropout: 0.2})
			if err != nil {
				return nil, nil, err
			}
			x, _ := g.Input("x", 8, 16)
			target, _ := g.Input("target", 8, 16)
			y, err := f.Forward(x)
			if err != nil {
				return nil, nil, err
			}
			loss, err := nn.MSELoss(y, target)
			return loss, map[*G.Node]*tensor.Dense{x: normal(g.Dtype(), "x", 8, 16), target: normal(g.Dtype(), "target", 8, 16)}, err
		}},
		hashModel{"mlp", func(g *graph.Graph) (*G.Node, map[*G.Node]*tensor.Dense, error) {
			m, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 12, Hidden: []int{32, 32}, Out: 5, Dropout: 0.3})
			if err != nil {
				return nil, nil, err
			}
			x, _ := g.Input("x", 10, 12)
			labels, _ := g.Input("labels", 10)
			logits, err := m.Forward(x)
			if err != nil {
				return nil, nil, err
			}
			loss, err := nn.CrossEntropyLoss(logits, labels)
			return loss, map[*G.Node]*tensor.Dense{x: normal(g.Dtype(), "x", 10, 12), labels: tokens(g.Dtype(), "labels", 5, 10)}, err
		}},
	)
	return ms
}

func gptHashModel(batch, t, dim int, recompute bool) hashModel {
	return hashModel{fmt.Sprintf("gpt B%d T%d d%d recompute=%t", batch, t, dim, recompute), func(g *graph.Graph) (*G.Node, map[*G.Node]*tensor.Dense, error) {
		const vocab = 40
		m, err := nn.NewGPT(g, "", nn.GPTConfig{BlockSize: t, VocabSize: vocab, Layers: 2, Heads: 4, Dim: dim, Dropout: 0.1,
			Recompute: recompute})
		if err != nil {
			return nil, nil, err
		}
		ids, _ := g.Input("ids", batch, t)
		targets, _ := g.Input("targets", batch, t)
		_, loss, err := m.Loss(ids, targets)
		return loss, map[*G.Node]*tensor.Dense{ids: tokens(g.Dtype(), "ids", vocab, batch, t), targets: tokens(g.Dtype(), "targets", vocab, batch, t)}, err
	}}
}

func tokens(dt tensor.Dtype, name string, n int, shape ...int) *tensor.Dense {
	r := rng.New(7, name)
	size := 1
	for _, s := range shape {
		size *= s
	}
	vals := make([]float64, size)
	for i := range vals {
		vals[i] = float64(r.IntN(n))
	}
	t, err := graph.FromFloat64s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func normal(dt tensor.Dtype, name string, shape ...int) *tensor.Dense {
	t, err := graph.NewTensor(dt, graph.Normal(0, 1), rng.New(7, name), shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// trainHash trains model for a few steps and returns the SHA-256 of its
// losses and final parameters.
func trainHash(t *testing.T, model hashModel, dt tensor.Dtype) string {
	g, err := graph.New(dt, 11)
	if err != nil {
		t.Fatal(err)
	}
	loss, inputs, err := model.build(g)
	if err != nil {
		t.Fatalf("%s: %v", model.name, err)
	}
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatalf("%s: %v", model.name, err)
	}
	for n, v := range inputs {
		if err := m.Set(n, v); err != nil {
			t.Fatalf("%s: %v", model.name, err)
		}
	}
	h := sha256.New()
	put := func(x float64) { binary.Write(h, binary.LittleEndian, math.Float64bits(x)) }
	opt, params := optim.NewAdamW(1e-2), g.ParamTensors()
	for step := 0; step < 4; step++ {
		g.SetTraining(true)
		g.SetStep(step)
		if err := m.Run(); err != nil {
			t.Fatalf("%s step %d: %v", model.name, step, err)
		}
		l, err := m.Loss()
		if err != nil {
			t.Fatal(err)
		}
		put(l)
		grads, err := m.Grads()
		if err != nil {
			t.Fatal(err)
		}
		norm, err := optim.ClipGradNorm(grads, 1)
		if err != nil {
			t.Fatal(err)
		}
		put(norm)
		if err := opt.Step(params, grads); err != nil {
			t.Fatal(err)
		}
	}
	g.SetTraining(false)
	if err := m.Run(); err != nil {
		t.Fatalf("%s evaluation: %v", model.name, err)
	}
	l, err := m.Loss()
	if err != nil {
		t.Fatal(err)
	}
	put(l)
	for _, p := range params {
		h.Write([]byte(p.Name))
		for _, x := range graph.Float64s(p.Value) {
			put(x)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestTrainingHashes(t *testing.T) {
	mode, path, ok := strings.Cut(os.Getenv("GELU_TRAIN_HASHES"), ":")
	if !ok || (mode != "write" && mode != "check") {
		t.Skip("set GELU_TRAIN_HASHES=write:FILE on one commit and check:FILE on another to compare their training bit for bit")
	}
	var lines []string
	for _, model := range hashModels() {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			lines = append(lines, fmt.Sprintf("%s %v %s", model.name, dt, trainHash(t, model, dt)))
		}
	}
	if mode == "write" {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d hashes to %s", len(lines), path)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	if len(want) != len(lines) {
		t.Fatalf("%s has %d hashes, this commit computes %d", path, len(want), len(lines))
	}
	for i := range lines {
		if lines[i] != want[i] {
			t.Errorf("differs from %s:\n got %s\nwant %s", path, lines[i], want[i])
		}
	}
}
