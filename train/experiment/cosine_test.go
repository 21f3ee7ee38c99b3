package experiment

import (
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

// lineModel is y = w·x + b on batches of 8, and the line y = 2x − 1 on 32
// points.
func lineModel(t *testing.T) (train.Model, *datasets.Dataset) {
	t.Helper()
	d := &datasets.Dataset{Name: "line", Features: 1, TargetDim: 1}
	for i := range 32 {
		x := float32(i)/16 - 1
		d.X, d.Targets = append(d.X, x), append(d.Targets, 2*x-1)
	}
	g, _ := graph.New(tensor.Float32, 1)
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
	return train.Model{Graph: g, Input: x, Target: y, Output: pred, Loss: loss, Task: train.Regression}, d
}

func TestTrainCosine(t *testing.T) {
	m, d := lineModel(t)
	r := &Run[int]{Seed: 3, Dir: t.TempDir(), Curve: NewCurve("val_loss")}
	c := Cosine{Batch: 8, Steps: 6, EvalEvery: 3, Warmup: 2, LR: 0.1, Floor: 0.01}
	var lrs []float64
	tr, err := TrainCosine(r, m, &optim.SGD{LearningRate: c.LR}, d, d, c, train.Config{Quiet: true,
		OnStep: func(_ *train.Trainer, s train.StepInfo) error { lrs = append(lrs, s.LR); return nil },
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }})
	if err != nil {
		t.Fatal(err)
	}
	// Evaluations at step 0, every 3 steps, and at the end of the first
	// epoch (32 points in 4 batches).
	if r.Steps != 6 || !slices.Equal(r.Curve.Steps, []int{0, 3, 4, 6}) || tr.ValData == nil || tr.Config.Dir != r.Dir {
		t.Errorf("%d steps, evaluations at %v, dir %q", r.Steps, r.Curve.Steps, tr.Config.Dir)
	}
	// Step t (from 0): 0.01 + 0.09·(1 + cos(πt/6))/2, times (t+1)/2 for
	// the two warmup steps.
	for i, got := range lrs {
		want := 0.01 + 0.09*(1+math.Cos(math.Pi*float64(i)/6))/2
		if i < 2 {
			want *= float64(i+1) / 2
		}
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("step %d: learning rate %v, want %v", i+1, got, want)
		}
	}
	if last := r.Curve.Last("val_loss"); !(last < r.Curve.First("val_loss")) {
		t.Errorf("validation loss %v → %v: did not learn", r.Curve.First("val_loss"), last)
	}
	// A diverging run is an error here, and recorded.
	m, d = lineModel(t)
	r = &Run[int]{Seed: 3, Curve: NewCurve("val_loss")}
	c.LR, c.Floor = 1e30, 0
	if _, err := TrainCosine(r, m, &optim.SGD{LearningRate: c.LR}, d, d, c, train.Config{Quiet: true}); err == nil || r.Diverged == "" || err.Error() != r.Diverged {
		t.Errorf("at lr 1e30: error %v, diverged %q", err, r.Diverged)
	}
}
