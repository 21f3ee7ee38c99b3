package transformer

import (
	"context"
	"fmt"
	"github.com/geluproject/gelu/train/experiment"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	r := &experiment.Run[int]{Seed: 3, Dir: t.TempDir(), Curve: experiment.NewCurve("val_loss")}
	c := Cosine{Batch: 8, Steps: 6, EvalEvery: 3, Warmup: 2, LR: 0.1, Floor: 0.01}
	var lrs []float64
	tr, err := TrainCosine(context.Background(), r, m, &optim.SGD{LearningRate: c.LR}, d, d, c, train.Config{Quiet: true,
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
	// A diverging run is recorded, not an error. Step 1 runs at lr 1e30/2
	// (warmup): the gradient of the MSE at the initial weights is of order
	// 1, so the weights become of order 1e29, finite in float32 (below
	// 3.4e38); step 2's loss, their square, overflows. So the run diverges
	// at step 2, after the evaluation at step 0 and one completed step.
	m, d = lineModel(t)
	r = &experiment.Run[int]{Seed: 3, Curve: experiment.NewCurve("val_loss")}
	c.LR, c.Floor = 1e30, 0
	tr, err = TrainCosine(context.Background(), r, m, &optim.SGD{LearningRate: c.LR}, d, d, c, train.Config{Quiet: true,
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }})
	if err != nil || tr == nil || !strings.Contains(r.Diverged, "step 2") {
		t.Fatalf("at lr 1e30: trainer %v, error %v, diverged %q; want the trainer, no error and the divergence recorded", tr != nil, err, r.Diverged)
	}
	t.Logf("at lr 1e30: %s", r.Diverged)
	if r.Steps != 1 || r.DivergedStep() != 2 || !slices.Equal(r.Curve.Steps, []int{0}) {
		t.Errorf("at lr 1e30: %d steps done, diverged at step %d, evaluations at %v; want 1, 2, [0]", r.Steps, r.DivergedStep(), r.Curve.Steps)
	}
}

// TrainNanoGPT trains with nanoGPT's optimizer: AdamW with the given
// betas, weight decay on the weight matrix and none on the bias
// (configure_optimizers' groups), get_lr's warmup and cosine down to
// MinLR, the norm clipped, evaluations at step 0 and every EvalEvery
// steps, and best.safetensors kept.
func TestTrainNanoGPT(t *testing.T) {
	m, d := lineModel(t)
	trainData, err1 := experiment.Loader(d, 8, true, 3)
	valData, err2 := experiment.Loader(d, 8, false, 0)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	r := &experiment.Run[int]{Seed: 3, Dir: t.TempDir(), Curve: experiment.NewCurve("val_loss")}
	n := NanoGPT{Steps: 6, EvalEvery: 3, Warmup: 2, LR: 0.1, MinLR: 0.01, Beta1: 0.8, Beta2: 0.99, WeightDecay: 0.1, Clip: 0.5}
	var lrs []float64
	tr, err := TrainNanoGPT(context.Background(), r, m, trainData, valData, n, train.Config{Quiet: true,
		OnStep: func(_ *train.Trainer, s train.StepInfo) error { lrs = append(lrs, s.LR); return nil },
		OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }})
	if err != nil {
		t.Fatal(err)
	}
	opt, ok := tr.Optimizer.(*optim.Adam)
	if !ok || opt.Beta1 != 0.8 || opt.Beta2 != 0.99 || !opt.Decoupled || tr.Config.ClipNorm != 0.5 {
		t.Fatalf("optimizer %#v, clip %v; want AdamW with betas (0.8, 0.99), clip 0.5", tr.Optimizer, tr.Config.ClipNorm)
	}
	if got := fmt.Sprint(opt.Groups); got != "[{[lin.weight] [weight_decay=0.1]} {[lin.bias] [weight_decay=0]}]" {
		t.Errorf("groups %s, want the weight decayed and the bias not", got)
	}
	for i, got := range lrs { // get_lr: 0.1·(t+1)/3 for t < 2, then a cosine from 0.1 to 0.01 over steps 2…6
		want := 0.01 + 0.09*(1+math.Cos(math.Pi*float64(i-2)/4))/2
		if i < 2 {
			want = 0.1 * float64(i+1) / 3
		}
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("step %d: learning rate %v, want %v", i+1, got, want)
		}
	}
	if len(lrs) != 6 || !slices.Equal(r.Curve.Steps, []int{0, 3, 4, 6}) || !(r.Curve.Last("val_loss") < r.Curve.First("val_loss")) {
		t.Errorf("%d steps, evaluations at %v, validation loss %v → %v", len(lrs), r.Curve.Steps, r.Curve.First("val_loss"), r.Curve.Last("val_loss"))
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "best.safetensors")); err != nil {
		t.Errorf("no best model: %v", err)
	}
}
