package experiment

import (
	"context"
	"math"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// line is y = 2x − 1 on 32 points, in batches of 8.
func line(t *testing.T, dtype tensor.Dtype, lr float64) *train.Trainer {
	t.Helper()
	d := &datasets.Dataset{Name: "line", Features: 1, TargetDim: 1}
	for i := range 32 {
		x := float32(i)/16 - 1
		d.X, d.Targets = append(d.X, x), append(d.Targets, 2*x-1)
	}
	l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 8, Shuffle: true, Seed: 1, Dtype: dtype})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := graph.New(dtype, 1)
	x, _ := g.Input("x", 8, 1)
	y, _ := g.Input("y", 8, 1)
	lin, err := nn.NewLinear(g, "lin", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := lin.Forward(x)
	loss, err := nn.MSELoss(pred, y)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: pred, Loss: loss, Task: train.Regression},
		&optim.SGD{LearningRate: lr}, l, l, train.Config{Epochs: 5, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTrainRecordsRunsAndDivergence(t *testing.T) {
	for _, dtype := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		r := &Run[int]{Curve: NewCurve("val_loss")}
		tr := line(t, dtype, 0.3)
		evals := 0
		tr.Config.OnEval = func(_ *train.Trainer, e train.EvalInfo) error { evals++; return r.Curve.Add(e.Step, e.ValLoss) }
		if err := r.Train(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
		if r.Steps != 20 || r.Diverged != "" || evals != 5 || !(r.StepSeconds > 0 && r.StepSeconds <= r.Seconds) {
			t.Errorf("%v: %d steps, %d evaluations, diverged %q, %v s of %v s in steps", dtype, r.Steps, evals, r.Diverged, r.StepSeconds, r.Seconds)
		}
		if first, last := r.Curve.Metric("val_loss")[0], r.Curve.Last("val_loss"); !(last < first/10) {
			t.Errorf("%v: validation loss %v → %v: did not learn", dtype, first, last)
		}
		// At learning rate 1e10 the weights grow by a factor of about 1e10
		// per step until the loss overflows (float64 too, within 20 steps):
		// a result, not an error.
		r = &Run[int]{}
		if err := r.Train(context.Background(), line(t, dtype, 1e10)); err != nil {
			t.Fatalf("%v: a divergence returned %v", dtype, err)
		}
		if r.Diverged == "" || r.Steps >= 20 {
			t.Errorf("%v: diverged %q after %d steps", dtype, r.Diverged, r.Steps)
		}
		if Diverged(nil) || !Diverged(graph.ErrNonFinite) || !Diverged(optim.ErrNonFiniteParam) || math.IsNaN(r.Seconds) {
			t.Error("Diverged misclassifies errors")
		}
	}
}
