package mlpnet

import (
	"slices"

	"math"
	"testing"

	"github.com/geluproject/gelu/graph"

	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train"
	"gorgonia.org/tensor"
)

func TestClassifierShapes(t *testing.T) {
	model, mlp, err := Classifier(tensor.Float64, 1, 4, nn.MLPConfig{In: 3, Hidden: []int{5, 6}, Out: 2, Activation: activation.GELU})
	if err != nil {
		t.Fatal(err)
	}
	if got := model.Input.Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 {
		t.Errorf("input shape %v, want (4, 3)", got)
	}
	if got := model.Output.Shape(); len(got) != 2 || got[0] != 4 || got[1] != 2 {
		t.Errorf("logits shape %v, want (4, 2)", got)
	}
	if len(mlp.Pre) != 2 || model.Task != train.Classification || model.Loss == nil || model.Target == nil {
		t.Errorf("%d pre-activations, task %v, loss %v", len(mlp.Pre), model.Task, model.Loss)
	}
	if _, _, err := Classifier(tensor.Float32, 1, 4, nn.MLPConfig{In: 0, Out: 2}); err == nil {
		t.Error("an MLP without inputs: no error")
	}
}

// ProbeSteps calls the probe at 0, every 3 steps and at the last (7),
// with the mean of the losses since the call before.
func TestProbeSteps(t *testing.T) {
	var steps []int
	var losses []float64
	hook, err := ProbeSteps(3, 7, func(step int, loss float64) error {
		steps, losses = append(steps, step), append(losses, loss)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 7; s++ {
		if err := hook(nil, train.StepInfo{Step: s, Loss: float64(s)}); err != nil {
			t.Fatal(err)
		}
	}
	want := []float64{math.NaN(), (1 + 2 + 3) / 3.0, (4 + 5 + 6) / 3.0, 7}
	if len(steps) != 4 || steps[0] != 0 || steps[1] != 3 || steps[2] != 6 || steps[3] != 7 || !math.IsNaN(losses[0]) {
		t.Fatalf("probed at %v with losses %v, want steps 0, 3, 6, 7 and losses %v", steps, losses, want)
	}
	for i := 1; i < 4; i++ {
		if losses[i] != want[i] {
			t.Errorf("loss at step %d: %v, want %v", steps[i], losses[i], want[i])
		}
	}
}

// With InputsLast the graph is the one built by hand in that order (the
// MLP, then x and y), so node names match it, and the initial weights are
// those of the default order: only the numbering changes.
func TestClassifierInputsLast(t *testing.T) {
	cfg := nn.MLPConfig{In: 3, Hidden: []int{4}, Out: 2, Activation: activation.ReLU, WeightInit: graph.UnitNormRows()}
	last, _, err := Classifier(tensor.Float32, 7, 5, cfg, InputsLast())
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.New(tensor.Float32, 7)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.NewMLP(g, "mlp", cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x", 5, 3)
	y, _ := g.Input("y", 5)
	logits, err := mlp.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := nn.CrossEntropyLoss(logits, y)
	if err != nil {
		t.Fatal(err)
	}
	if last.Loss.Name() != loss.Name() || last.Input.Name() != "x" || last.Target.Name() != "y" {
		t.Errorf("loss %q, inputs %q %q; built by hand: loss %q, inputs x y", last.Loss.Name(), last.Input.Name(), last.Target.Name(), loss.Name())
	}
	first, _, err := Classifier(tensor.Float32, 7, 5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if first.Loss.Name() == last.Loss.Name() {
		t.Errorf("loss %q in both orders, want the inputs' numbers to differ", first.Loss.Name())
	}
	a, b := first.Graph.ParamTensors(), last.Graph.ParamTensors()
	if len(a) != len(b) || len(a) != 4 {
		t.Fatalf("%d and %d parameters, want 4 (two weights, two biases) in both", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !slices.Equal(a[i].Value.Data().([]float32), b[i].Value.Data().([]float32)) {
			t.Errorf("parameter %d differs between the orders: %s %v vs %s %v", i, a[i].Name, a[i].Value.Data(), b[i].Name, b[i].Value.Data())
		}
	}
}
