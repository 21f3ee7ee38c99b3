package main

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/examples/internal/transformer"
	"github.com/geluproject/gelu/train"
)

// windows serves fixed batches of windows of ids: batch i starts its rows
// at starts[i].
type windows struct {
	ids, x, y []int
	starts    [][]int
	t         int
}

func (w *windows) NumBatches() int { return len(w.starts) }

func (w *windows) Batch(_, i int) (datasets.Batch, error) {
	for r, s := range w.starts[i] {
		copy(w.x[r*w.t:(r+1)*w.t], w.ids[s:s+w.t])
		copy(w.y[r*w.t:(r+1)*w.t], w.ids[s+1:s+w.t+1])
	}
	shape := []int{len(w.starts[i]), w.t}
	return datasets.Batch{Index: w.starts[i], Size: len(w.starts[i]), Fields: []datasets.Field{{Name: "x", Shape: shape, IDs: w.x}, {Name: "y", Shape: shape, IDs: w.y}}}, nil
}

// table reads the rows of numbers in testdata/nanogpt_parity/name.
func table(t *testing.T, name string) [][]float64 {
	t.Helper()
	raw, err := os.ReadFile("testdata/nanogpt_parity/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var row []float64
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// The model and training recipe char-gpt runs are nanoGPT's: from
// nanoGPT's initial weights, on the same windows of the Opticks, 60 steps
// of TrainNanoGPT (AdamW groups, betas, weight decay, clipping, warmup and
// cosine) give the losses and gradient norms that nanoGPT's model.py and
// train.py step give in PyTorch (testdata/nanogpt_parity.py made them),
// to float32 rounding.
func TestTrainerMatchesNanoGPT(t *testing.T) {
	c := defaults()
	c.T, c.DModel, c.Heads, c.Blocks = 16, 32, 2, 2
	d, err := loadData(c)
	if err != nil {
		t.Fatal(err)
	}
	var starts [][]int
	for _, row := range table(t, "ix.txt") {
		var s []int
		for _, v := range row {
			s = append(s, int(v))
		}
		starts = append(starts, s)
	}
	want := table(t, "losses.txt")
	m, gpt, err := c.gpt(d.Vocab.Size(), "gelu", len(starts[0]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.LoadWeights("testdata/nanogpt_parity/init.safetensors", gpt); err != nil {
		t.Fatal(err)
	}
	data := &windows{ids: d.Train, starts: starts, t: c.T, x: make([]int, len(starts[0])*c.T), y: make([]int, len(starts[0])*c.T)}
	var got []train.StepInfo
	recipe := transformer.NanoGPT{Steps: len(starts), EvalEvery: len(starts), Warmup: 6, LR: 3e-3, MinLR: 3e-4, Beta1: 0.9, Beta2: 0.99, WeightDecay: 0.1, Clip: 1}
	if _, err := transformer.TrainNanoGPT(context.Background(), &runResult{}, m, data, nil, recipe, train.Config{Quiet: true,
		OnStep: func(_ *train.Trainer, s train.StepInfo) error { got = append(got, s); return nil }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d", len(got), len(want))
	}
	for i, s := range got {
		if math.Abs(s.Loss-want[i][0]) > 2e-5 || math.Abs(s.GradNorm-want[i][1]) > 2e-5*want[i][1] {
			t.Errorf("step %d: loss %.7f, gradient norm %.6f; nanoGPT %.7f, %.6f", s.Step, s.Loss, s.GradNorm, want[i][0], want[i][1])
		}
	}
}
