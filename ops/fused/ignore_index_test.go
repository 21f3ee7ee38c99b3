package fused_test

// CrossEntropy with IgnoreIndex: PyTorch's ignore_index, checked against
// closed forms and against PyTorch's own values and gradients
// (testdata/cross_entropy_torch.json, written by
// testdata/gen_cross_entropy.py).

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/internal/optest"
	"gorgonia.org/tensor"
)

// ceLoss runs CrossEntropy(z, y, opts...) and returns the loss and its
// gradient with respect to z.
func ceLoss(t *testing.T, dt tensor.Dtype, rows, classes int, z, y []float64, opts ...fused.CEOption) (float64, []float64, error) {
	t.Helper()
	g, _ := graph.New(dt, 1)
	zn, _ := g.Input("z", rows, classes)
	yn, _ := g.Input("y", rows)
	loss, err := fused.CrossEntropy(zn, yn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(loss, graph.WithRespectTo(zn))
	if err != nil {
		t.Fatal(err)
	}
	zv, _ := graph.FromFloat64s(dt, z, rows, classes)
	yv, _ := graph.FromFloat64s(dt, y, rows)
	if err := m.Set(zn, zv); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(yn, yv); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		return 0, nil, err
	}
	l, err := m.Loss()
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Grad(zn)
	if err != nil {
		t.Fatal(err)
	}
	return l, graph.Float64s(d), nil
}

// Rows whose softmax is known exactly: (1, 2, 3, 4)/10 from logits
// log(1, 2, 3, 4), and uniform from zeros. Two of four rows are ignored,
// so the mean is over two rows.
func TestCrossEntropyIgnoreIndexClosedForm(t *testing.T) {
	l := math.Log
	z := []float64{
		l(1), l(2), l(3), l(4),
		5, -7, 1, 0, // ignored: these logits must not matter
		0, 0, 0, 0,
		100, 0, 0, 0, // ignored
	}
	y := []float64{3, -1, 1, -1}
	wantLoss := (l(10.0/4) + l(4)) / 2
	wantGrad := []float64{
		0.1 / 2, 0.2 / 2, 0.3 / 2, (0.4 - 1) / 2,
		0, 0, 0, 0,
		0.25 / 2, (0.25 - 1) / 2, 0.25 / 2, 0.25 / 2,
		0, 0, 0, 0,
	}
	for _, dt := range optest.Dtypes() {
		tol := 1e-15
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		loss, grad, err := ceLoss(t, dt, 4, 4, z, y, fused.IgnoreIndex(-1))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(loss-wantLoss) > tol*wantLoss {
			t.Errorf("%v: loss %v, want (log 2.5 + log 4)/2 = %v", dt, loss, wantLoss)
		}
		if i := mismatch(grad, wantGrad, tol); i >= 0 {
			t.Errorf("%v: gradient %v, want %v (element %d)", dt, grad, wantGrad, i)
		}
		for i := 4; i < 8; i++ {
			if math.Float64bits(grad[i]) != 0 || math.Float64bits(grad[i+8]) != 0 {
				t.Errorf("%v: an ignored row's gradient is %v, want +0", dt, grad[i])
			}
		}

		// Every row ignored: 0 and no gradient (PyTorch 1.13: NaN).
		loss, grad, err = ceLoss(t, dt, 2, 4, z[:8], []float64{-1, -1}, fused.IgnoreIndex(-1))
		if err != nil || loss != 0 {
			t.Errorf("%v: every row ignored: loss %v, error %v, want 0", dt, loss, err)
		}
		for i, g := range grad {
			if g != 0 {
				t.Errorf("%v: every row ignored: gradient %d is %v, want 0", dt, i, g)
			}
		}

		// An ignore_index that is a class leaves that class's rows out.
		loss, _, err = ceLoss(t, dt, 3, 4, z[:12], []float64{3, 2, 2}, fused.IgnoreIndex(2))
		if err != nil || math.Abs(loss-l(2.5)) > tol {
			t.Errorf("%v: ignore_index 2: loss %v, error %v, want log 2.5", dt, loss, err)
		}

		// Without the option −1 is a bad label, and with it other labels
		// are still checked.
		_, _, err = ceLoss(t, dt, 4, 4, z, y)
		if err == nil {
			t.Errorf("%v: label −1 without IgnoreIndex: no error", dt)
		}
		_, _, err = ceLoss(t, dt, 4, 4, z, []float64{3, -2, 1, -1}, fused.IgnoreIndex(-1))
		wantErrContains(t, err, "label of row 1 is -2, want an integer class in [0, 4) or the ignore_index -1")
	}
}

// Two cross-entropies of the same nodes that differ only in ignore_index
// are two nodes (gorgonia merges ops with equal hash keys).
func TestCrossEntropyIgnoreIndexIsPartOfTheOp(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	z, _ := g.Input("z", 3, 4)
	y, _ := g.Input("y", 3)
	a, _ := fused.CrossEntropy(z, y)
	b, _ := fused.CrossEntropy(z, y, fused.IgnoreIndex(2))
	c, _ := fused.CrossEntropy(z, y, fused.IgnoreIndex(3))
	if a == b || b == c {
		t.Errorf("cross-entropies with different ignore_index share a node: %v %v %v", a, b, c)
	}
	if _, err := fused.CrossEntropy(z, y, nil); err == nil {
		t.Error("a nil option: no error")
	}
}

func wantErrContains(t *testing.T, err error, s string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), s) {
		t.Errorf("error %v, want one containing %q", err, s)
	}
}

type torchCECase struct {
	Name        string     `json:"name"`
	Dtype       string     `json:"dtype"`
	Rows        int        `json:"rows"`
	Classes     int        `json:"classes"`
	Logits      []float64  `json:"logits"`
	Labels      []float64  `json:"labels"`
	IgnoreIndex int        `json:"ignore_index"`
	Loss        *float64   `json:"loss"`
	Grad        []*float64 `json:"grad"`
}

func TestCrossEntropyIgnoreIndexMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/cross_entropy_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Cases []torchCECase `json:"cases"`
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	if len(fixture.Cases) == 0 {
		t.Fatal("no cases in the fixture")
	}
	for _, c := range fixture.Cases {
		dt, tol := tensor.Float64, 1e-14
		if c.Dtype == "float32" {
			dt, tol = tensor.Float32, 2e-6
		}
		loss, grad, err := ceLoss(t, dt, c.Rows, c.Classes, c.Logits, c.Labels, fused.IgnoreIndex(c.IgnoreIndex))
		if err != nil {
			t.Fatalf("%s %s: %v", c.Name, c.Dtype, err)
		}
		if c.Loss == nil { // PyTorch's 0/0 when every row is ignored; here 0
			if loss != 0 {
				t.Errorf("%s %s: loss %v, want 0 where PyTorch gives NaN", c.Name, c.Dtype, loss)
			}
			continue
		}
		if math.Abs(loss-*c.Loss) > tol*math.Max(1, math.Abs(*c.Loss)) {
			t.Errorf("%s %s: loss %.17g, PyTorch %.17g", c.Name, c.Dtype, loss, *c.Loss)
		}
		want := make([]float64, len(c.Grad))
		for i, g := range c.Grad {
			want[i] = *g
		}
		if i := mismatch(grad, want, tol); i >= 0 {
			t.Errorf("%s %s: gradient element %d is %v, PyTorch %v", c.Name, c.Dtype, i, grad[i], want[i])
		}
	}
}
