package probe_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// The one-weight regression of TestNetRunStepsAndWatches: x = (1, 2),
// y = (2, 4), loss mean((xw − y)²) = 2.5(w − 2)², gradient 5w − 10; SGD
// at 0.05 maps w to 0.75w + 0.5. sampleVar is the n − 1 variance.
func regressionPath(steps int) (ws, grads, losses []float64) {
	w := 0.0
	for range steps + 1 {
		ws, grads, losses = append(ws, w), append(grads, 5*w-10), append(losses, 2.5*(w-2)*(w-2))
		w = 0.75*w + 0.5
	}
	return ws, grads, losses
}

func sampleVar(v ...float64) float64 {
	var m, s float64
	for _, x := range v {
		m += x / float64(len(v))
	}
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v)-1)
}

func TestTrainVarianceBlocks(t *testing.T) {
	ws, g, l := regressionPath(5)
	for _, dt := range dtypes {
		n := linearNet(t, dt, 2, 1, 1, []float64{0})
		x, y := dense(dt, []int{2, 1}, []float64{1, 2}), dense(dt, []int{2, 1}, []float64{2, 4})
		next := func() (*tensor.Dense, *tensor.Dense, error) { return x, y, nil }
		// 5 steps in blocks of 2: blocks end at 2 and 4, step 5 trains unmeasured.
		b, err := n.TrainVariance(next, 5, 2, &optim.SGD{LearningRate: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		ends, vars, losses := b.Ends, b.Var, b.Loss
		want := []float64{sampleVar(g[0], g[1]), sampleVar(g[2], g[3])}
		wantLoss := []float64{(l[0] + l[1]) / 2, (l[2] + l[3]) / 2}
		if len(ends) != 2 || ends[0] != 2 || ends[1] != 4 {
			t.Fatalf("%v: block ends %v, want [2 4]", dt, ends)
		}
		for i := range want {
			if math.Abs(vars[i]-want[i]) > 1e-5*want[i] || math.Abs(losses[i]-wantLoss[i]) > 1e-5*wantLoss[i] {
				t.Errorf("%v block %d: Var %v, loss %v; want %v, %v", dt, i, vars[i], losses[i], want[i], wantLoss[i])
			}
		}
		if w := at0(n.Params[0].Value); math.Abs(w-ws[5]) > 1e-6 {
			t.Errorf("%v: w = %v after 5 steps, want %v", dt, w, ws[5])
		}
		if _, err := n.TrainVariance(next, 5, 1, nil); err == nil {
			t.Errorf("%v: blocks of 1 step: no error", dt)
		}
	}
}

func TestMeasureSkipsTheBurnIn(t *testing.T) {
	_, g, _ := regressionPath(3)
	for _, dt := range dtypes {
		n := linearNet(t, dt, 2, 1, 1, []float64{0})
		x, y := dense(dt, []int{2, 1}, []float64{1, 2}), dense(dt, []int{2, 1}, []float64{2, 4})
		s, err := n.Measure(func() (*tensor.Dense, *tensor.Dense, error) { return x, y, nil },
			probe.Phase{Name: "window", Steps: 2, Burn: 1, Opt: &optim.SGD{LearningRate: 0.05}, Buffers: []probe.Buffer{{Form: probe.EMA, Beta: 0.9}}})
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != "window" {
			t.Errorf("%v: the summary is named %q, want the phase's name", dt, s.Name)
		}
		if want := sampleVar(g[1], g[2]); s.Steps != 2 || math.Abs(s.All().Var-want) > 1e-5*want || len(s.Buffers) != 1 || !math.IsNaN(s.UnitMeanSq) {
			t.Errorf("%v: %d steps, Var(g) %v (want 2, %v), %d buffers, unit E[f'²] %v", dt, s.Steps, s.All().Var, want, len(s.Buffers), s.UnitMeanSq)
		}
	}
	if _, err := (&probe.Net{}).Measure(nil, probe.Phase{}); err == nil {
		t.Error("an empty Net measured")
	}
}

// NewNet keeps the output, so Accuracy can read it: with W = I on two
// inputs the larger input is the predicted class (2 of 3 right).
func TestNewNetKeepsTheOutput(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3, 2)
	y, _ := g.Input("y", 3)
	lin, err := nn.NewLinear(g, "lin", 2, 2, nn.NoBias())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := lin.Forward(x)
	loss, _ := nn.CrossEntropyLoss(out, y)
	copyInto(g.ParamTensors()[0].Value, []float64{1, 0, 0, 1})
	n, err := probe.NewNet(train.Model{Graph: g, Input: x, Target: y, Output: out, Loss: loss}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &datasets.Dataset{Name: "d", Features: 2, Classes: 2, X: []float32{2, 1, 0, 1, 3, 0}, Labels: []int{0, 0, 0}}
	l, _ := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 3, Dtype: tensor.Float64})
	if acc, err := n.Accuracy(l); err != nil || math.Abs(acc-2.0/3) > 1e-12 {
		t.Errorf("accuracy %v, %v; want 2/3", acc, err)
	}
	if _, err := probe.NewNet(train.Model{}, nil); err == nil {
		t.Error("a model without graph: no error")
	}
}

// A step that fails is named by its number among all the steps of the
// call: the batch that makes step 7 of TrainVariance (in blocks of 3) and
// step 4 of Measure (burn-in 2 included) fail holds a NaN, which the
// machine refuses.
func TestStepErrorCountsFromTheCallsFirstStep(t *testing.T) {
	for _, dt := range dtypes {
		n := linearNet(t, dt, 2, 1, 1, []float64{0})
		x, y := dense(dt, []int{2, 1}, []float64{1, 2}), dense(dt, []int{2, 1}, []float64{2, 4})
		bad := dense(dt, []int{2, 1}, []float64{math.NaN(), 2})
		failingAt := func(k int) probe.Stream {
			i := 0
			return func() (*tensor.Dense, *tensor.Dense, error) {
				if i++; i == k {
					return bad, y, nil
				}
				return x, y, nil
			}
		}
		var se *probe.StepError
		_, err := n.TrainVariance(failingAt(7), 10, 3, &optim.SGD{LearningRate: 0.01})
		if !errors.As(err, &se) || se.Step != 7 || se.Steps != 10 || !strings.Contains(err.Error(), "probe.Net.TrainVariance: step 7 of 10: ") {
			t.Errorf("%v: TrainVariance failing at step 7 of 10: %v (%+v)", dt, err, se)
		}
		_, err = n.TrainVariance(failingAt(10), 10, 3, nil) // in the unmeasured rest
		if !errors.As(err, &se) || se.Step != 10 {
			t.Errorf("%v: TrainVariance failing at step 10 of 10: %v", dt, err)
		}
		_, err = n.Measure(failingAt(4), probe.Phase{Name: "w", Steps: 3, Burn: 2})
		if !errors.As(err, &se) || se.Step != 4 || se.Steps != 5 || !strings.Contains(err.Error(), "probe.Net.Measure: step 4 of 5: ") {
			t.Errorf("%v: Measure failing at step 4 of 5: %v", dt, err)
		}
		_, err = n.Run(failingAt(2), 3, nil, nil)
		if !errors.As(err, &se) || se.Step != 2 || !strings.Contains(err.Error(), "probe.Net.Run: step 2 of 3: ") {
			t.Errorf("%v: Run failing at step 2 of 3: %v", dt, err)
		}
	}
}
