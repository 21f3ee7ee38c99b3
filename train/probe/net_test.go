package probe_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/nn"
	"github.com/geluproject/gelu/optim"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// linearNet is pred = x·w (one weight, no bias) with an MSE loss, or, for
// classes > 1, logits = x·Wᵀ with cross-entropy, on batches of rows.
func linearNet(t *testing.T, dt tensor.Dtype, rows, in, classes int, w []float64) *probe.Net {
	t.Helper()
	g, _ := graph.New(dt, 1)
	n := &probe.Net{}
	n.Input, _ = g.Input("x", rows, in)
	out := classes
	if classes == 1 {
		n.Target, _ = g.Input("y", rows, 1)
	} else {
		n.Target, _ = g.Input("y", rows)
	}
	lin, err := nn.NewLinear(g, "lin", in, out, nn.NoBias())
	if err != nil {
		t.Fatal(err)
	}
	if n.Output, err = lin.Forward(n.Input); err != nil {
		t.Fatal(err)
	}
	loss, err := nn.CrossEntropyLoss(n.Output, n.Target)
	if classes == 1 {
		loss, err = nn.MSELoss(n.Output, n.Target)
	}
	if err != nil {
		t.Fatal(err)
	}
	n.Params = g.ParamTensors()
	copyInto(n.Params[0].Value, w)
	if n.M, err = g.Compile(loss, graph.Keep(n.Output)); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNetRunStepsAndWatches follows two SGD steps of a one-weight
// regression by hand: x = (1, 2), y = (2, 4), w = 0, learning rate 0.05.
// Loss mean((xw − y)²): 10, then 5.625 at w = 0.5; the gradient
// 2·mean(x(xw − y)) is −10, then −7.5, so w ends at 0.875 and the
// gradients' sample variance is 3.125.
func TestNetRunStepsAndWatches(t *testing.T) {
	for _, dt := range dtypes {
		n := linearNet(t, dt, 2, 1, 1, []float64{0})
		x, y := dense(dt, []int{2, 1}, []float64{1, 2}), dense(dt, []int{2, 1}, []float64{2, 4})
		w, _ := probe.NewWatch(n.Params, 0, 0)
		loss, err := n.Run(func() (*tensor.Dense, *tensor.Dense, error) { return x, y, nil }, 2, w, &optim.SGD{LearningRate: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := w.Summary()
		wv := at0(n.Params[0].Value)
		if math.Abs(loss-7.8125) > 1e-6 || math.Abs(wv-0.875) > 1e-6 || math.Abs(s.Grad[1].Var-3.125) > 1e-5 || s.Steps != 2 {
			t.Errorf("%v: mean loss %v, w %v, Var(g) %v over %d steps; want 7.8125, 0.875, 3.125 over 2", dt, loss, wv, s.Grad[1].Var, s.Steps)
		}
		// Without an optimizer the weight stays where it is.
		if _, err := n.Run(func() (*tensor.Dense, *tensor.Dense, error) { return x, y, nil }, 3, nil, nil); err != nil {
			t.Fatal(err)
		}
		if w2 := at0(n.Params[0].Value); w2 != wv {
			t.Errorf("%v: a run without optimizer moved w from %v to %v", dt, wv, w2)
		}
		boom := errors.New("boom")
		calls := 0
		_, err = n.Run(func() (*tensor.Dense, *tensor.Dense, error) {
			calls++
			if calls == 2 {
				return nil, nil, boom
			}
			return x, y, nil
		}, 3, nil, nil)
		if !errors.Is(err, boom) {
			t.Errorf("%v: stream error %v", dt, err)
		}
		nan := dense(dt, []int{2, 1}, []float64{math.NaN(), 1})
		if _, err := n.Run(func() (*tensor.Dense, *tensor.Dense, error) { return nan, y, nil }, 1, nil, nil); err == nil || !strings.Contains(err.Error(), "step 1 of 1") {
			t.Errorf("%v: NaN input: %v", dt, err)
		}
	}
	if _, err := (&probe.Net{}).Grads(nil, nil); err == nil {
		t.Error("an empty Net ran")
	}
}

// TestNetAccuracy: with W = I the predicted class is the larger input.
// Two of the three examples (labels all 0) are right; the loader's last
// batch holds one real row and one row of padding, which must not count.
func TestNetAccuracy(t *testing.T) {
	for _, dt := range dtypes {
		n := linearNet(t, dt, 2, 2, 2, []float64{1, 0, 0, 1})
		d := &datasets.Dataset{Name: "three", Features: 2, X: []float32{1, 0, 0, 1, 1, 0}, Labels: []int{0, 0, 0}, Classes: 2}
		l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 2, Dtype: dt})
		if err != nil {
			t.Fatal(err)
		}
		acc, err := n.Accuracy(l)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(acc-2.0/3) > 1e-15 {
			t.Errorf("%v: accuracy %v, want 2/3", dt, acc)
		}
		n.Output = nil
		if _, err := n.Accuracy(l); err == nil {
			t.Errorf("%v: accuracy without an output node", dt)
		}
	}
}

// TestStreams: a LoaderStream continues into the next epoch, and a
// Sampler's stream is its Next.
func TestStreams(t *testing.T) {
	d := &datasets.Dataset{Name: "six", Features: 1, X: []float32{0, 1, 2, 3, 4, 5}, Labels: []int{0, 1, 0, 1, 0, 1}, Classes: 2}
	l, err := datasets.NewLoader(d, datasets.LoaderConfig{BatchSize: 2, Shuffle: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	next := probe.LoaderStream(l)
	for step := 0; step < 7; step++ {
		x, _, err := next()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := l.Batch(step/3, step%3)
		if x.Float32s()[0] != want.X.Float32s()[0] || x.Float32s()[1] != want.X.Float32s()[1] {
			t.Errorf("step %d: batch %v, want epoch %d batch %d = %v", step, x.Float32s(), step/3, step%3, want.X.Float32s())
		}
	}
	s1, _ := probe.NewSampler(d, 4, tensor.Float64, 9, "s")
	s2, _ := probe.NewSampler(d, 4, tensor.Float64, 9, "s")
	st := s1.Stream()
	for i := 0; i < 3; i++ {
		x, y, err := st()
		wx, wy, _ := s2.Next()
		if err != nil || !slices.Equal(x.Float64s(), wx.Float64s()) || !slices.Equal(y.Float64s(), wy.Float64s()) {
			t.Errorf("draw %d: stream %v %v, Next %v %v", i, x.Float64s(), y.Float64s(), wx.Float64s(), wy.Float64s())
		}
	}
}

// at0 is a tensor's first element.
func at0(t *tensor.Dense) float64 {
	if d, ok := t.Data().([]float32); ok {
		return float64(d[0])
	}
	return t.Float64s()[0]
}
