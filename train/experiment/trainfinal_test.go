package experiment

import (
	"context"
	"math"
	"testing"

	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

// TestTrainFinal trains the line of TestTrainRecordsRunsAndDivergence: the
// value kept is the validation loss of the trained weights (evaluated
// again here, after training), the hook set before still runs at every
// evaluation, and a diverged run keeps NaN.
func TestTrainFinal(t *testing.T) {
	valLoss := func(e train.EvalInfo) float64 { return e.ValLoss }
	r := &Run[int]{}
	tr := line(t, tensor.Float64, 0.3)
	evals := 0
	tr.Config.OnEval = func(*train.Trainer, train.EvalInfo) error { evals++; return nil }
	if err := r.TrainFinal(context.Background(), tr, "val_loss", valLoss); err != nil {
		t.Fatal(err)
	}
	e, err := tr.Evaluate(tr.ValData)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Values["val_loss"]; evals != 5 || math.Abs(got-e.Loss) > 1e-12 || !(got < 0.1) {
		t.Errorf("%d evaluations, kept val_loss %v; want 5 and the trained weights' %v", evals, got, e.Loss)
	}
	r = &Run[int]{Values: map[string]float64{}}
	if err := r.TrainFinal(context.Background(), line(t, tensor.Float64, 1e10), "val_loss", valLoss); err != nil {
		t.Fatal(err)
	}
	if r.Diverged == "" || !math.IsNaN(r.Values["val_loss"]) {
		t.Errorf("diverged %q, kept %v; want a divergence and NaN", r.Diverged, r.Values["val_loss"])
	}
}
