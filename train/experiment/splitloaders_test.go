package experiment

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

func TestSplitsLoaders(t *testing.T) {
	ds := func(n int) *datasets.Dataset {
		d := &datasets.Dataset{Name: "toy", Features: 1, Classes: 2}
		for i := range n {
			d.X, d.Labels = append(d.X, float32(i)), append(d.Labels, i%2)
		}
		return d
	}
	// 10 training rows in batches of 4: 2 whole batches (the last 2 rows
	// dropped); 7 test rows: 2 batches, the last partial; no validation split.
	s := Splits{Train: ds(10), Test: ds(7), TrainEval: ds(5)}
	l, err := s.Loaders(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if l.Train.NumBatches() != 2 || l.Test.NumBatches() != 2 || l.TrainEval.NumBatches() != 2 || l.Val != nil {
		t.Errorf("batches train %d test %d train-eval %d, val %v: want 2, 2, 2 and no val loader",
			l.Train.NumBatches(), l.Test.NumBatches(), l.TrainEval.NumBatches(), l.Val)
	}
	b, err := l.Test.Batch(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.X.Data().([]float32); !slices.Equal(got, []float32{0, 1, 2, 3}) {
		t.Errorf("first test batch %v, want rows in order [0 1 2 3]", got)
	}
	if _, err := (Splits{Train: ds(10), Test: ds(7)}).Loaders(0, 3); err == nil {
		t.Error("batch 0: no error")
	}
}

// A classifier with zero weights and biases gives equal logits over two
// classes: loss ln 2 on every example, and an error of ½ on labels half 0,
// half 1 whichever class a tie picks.
func TestSplitLoadersScore(t *testing.T) {
	d := &datasets.Dataset{Name: "halves", X: []float32{1, 2, 3, 4}, Features: 1, Labels: []int{0, 1, 1, 0}, Classes: 2}
	l, err := Splits{Train: d, Test: d, Val: d}.Loaders(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	model, _, err := zeroClassifier(4)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(model, &optim.SGD{LearningRate: 0.1}, l.Train, l.Test, train.Config{Epochs: 1, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Score(tr)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.ValLoss-math.Ln2) > 1e-6 || s.ValError != 0.5 || !math.IsNaN(s.TrainEvalLoss) || !math.IsNaN(s.TrainEvalError) {
		t.Errorf("scores %+v, want validation loss ln 2 = %v, error 0.5, and NaN without a train-eval split", s, math.Ln2)
	}
}

// A classifier with zero weights and biases trained at learning rate 0
// keeps equal logits over two classes: every loss is ln 2 and every error
// ½ on labels half 0, half 1. 8 training rows in batches of 4 are 2 steps
// an epoch; evaluating every 2 steps over 2 epochs gives steps 2 and 4.
// Without a validation split val_* are NaN.
func TestTrainSplits(t *testing.T) {
	d := &datasets.Dataset{Name: "halves", X: []float32{1, 2, 3, 4, 5, 6, 7, 8}, Features: 1, Labels: []int{0, 1, 1, 0, 1, 0, 0, 1}, Classes: 2}
	model, _, err := zeroClassifier(4)
	if err != nil {
		t.Fatal(err)
	}
	r := &Run[string]{Seed: 1, Curve: NewCurve(SplitMetrics...)}
	var hooked []int
	err = TrainSplits(context.Background(), r, model, &optim.SGD{}, Splits{Train: d, Test: d, TrainEval: d}, 4, train.Config{Epochs: 2, EvalEvery: 2, Quiet: true,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { hooked = append(hooked, e.Step); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Curve.Steps, []int{2, 4}) || !slices.Equal(hooked, []int{2, 4}) || r.Steps != 4 || r.Diverged != "" {
		t.Fatalf("evaluations at %v, hook at %v, %d steps, diverged %q: want 2 and 4 for both, 4 steps, no divergence", r.Curve.Steps, hooked, r.Steps, r.Diverged)
	}
	for _, m := range SplitMetrics {
		for i, v := range r.Curve.Metric(m) {
			want := math.Ln2
			switch m {
			case "val_loss", "val_error":
				want = math.NaN()
			case "test_error":
				want = 0.5
			}
			if math.IsNaN(want) != math.IsNaN(v) || math.Abs(v-want) > 1e-6 {
				t.Errorf("%s at step %d: %v, want %v", m, r.Curve.Steps[i], v, want)
			}
		}
	}
}

// zeroClassifier is a linear classifier of one feature into two classes
// with zero weights and biases, for batches of rows.
func zeroClassifier(rows int) (train.Model, *nn.MLP, error) {
	g, err := graph.New(tensor.Float32, 1)
	if err != nil {
		return train.Model{}, nil, err
	}
	x, _ := g.Input("x", rows, 1)
	y, _ := g.Input("y", rows)
	mlp, err := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 1, Out: 2, WeightInit: graph.Zeros(), BiasInit: graph.Zeros()})
	if err != nil {
		return train.Model{}, nil, err
	}
	logits, err := mlp.Forward(x)
	if err != nil {
		return train.Model{}, nil, err
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	return train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss}, mlp, err
}
