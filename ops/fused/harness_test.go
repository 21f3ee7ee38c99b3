package fused_test

// The scaffolding the op tests share: cases (an op, its inputs and a
// float64 reference), the forward check in both dtypes, the gradient
// checks, and the LispMachine (DoDiff) against the tape (SymDiff).

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/fused"
	"github.com/geluproject/gelu/ops/internal/optest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func randn(seed uint64, shape ...int) *tensor.Dense {
	t, err := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(seed, "layers"), shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func labelsTensor(ys ...float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(ys)), tensor.WithBacking(ys))
}

func toDtype(t *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	if dt == tensor.Float64 {
		return t.Clone().(*tensor.Dense)
	}
	f := make([]float32, t.Shape().TotalSize())
	for i, x := range t.Float64s() {
		f[i] = float32(x)
	}
	return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(f))
}

// layerCase is one op under test: build on input nodes, and the reference
// forward value computed from float64 inputs.
type layerCase struct {
	name   string
	inputs []*tensor.Dense
	// noGrad lists inputs that are not differentiable (labels, indices).
	noGrad map[int]bool
	build  func(in []*G.Node) (*G.Node, error)
	ref    func(in [][]float64) []float64
}

// mismatch returns the first index where got and want differ by more than
// tol relative to max(1, |want|), or −1.
func mismatch(got, want []float64, tol float64) int {
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			return i
		}
	}
	return -1
}

// runForward evaluates the case on the tape machine in dtype dt.
func runForward(t *testing.T, c layerCase, dt tensor.Dtype) []float64 {
	t.Helper()
	g, _ := graph.New(dt, 1)
	var nodes []*G.Node
	for i, in := range c.inputs {
		n, err := g.Input(fmt.Sprintf("in%d", i), in.Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	out, err := c.build(nodes)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(nil, graph.Keep(out))
	if err != nil {
		t.Fatal(err)
	}
	setAndRun(t, m, nodes, c, dt)
	v, _ := m.Value(out)
	if !out.IsScalar() {
		return optest.Floats(t, v)
	}
	s, _ := m.Value(out)
	switch x := s.(type) {
	case *G.F64:
		return []float64{float64(*x)}
	case *G.F32:
		return []float64{float64(*x)}
	}
	t.Fatalf("scalar output is %T", s)
	return nil
}

// setAndRun sets the case's inputs, in dtype dt, on the nodes and runs m.
func setAndRun(t *testing.T, m *graph.Machine, nodes []*G.Node, c layerCase, dt tensor.Dtype) {
	t.Helper()
	for i, n := range nodes {
		if err := m.Set(n, toDtype(c.inputs[i], dt)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
}

// checkForward compares each case's output in both dtypes with its float64
// reference, to 1e-13 in float64 and tol32 in float32.
func checkForward(t *testing.T, cases []layerCase, tol32 float64) {
	for _, c := range cases {
		var in [][]float64
		for _, x := range c.inputs {
			in = append(in, x.Float64s())
		}
		want := c.ref(in)
		for _, dt := range optest.Dtypes() {
			got := runForward(t, c, dt)
			tol := 1e-13
			if dt == tensor.Float32 {
				tol = tol32
			}
			if len(got) != len(want) {
				t.Fatalf("%s %v: %d outputs, want %d", c.name, dt, len(got), len(want))
			}
			if i := mismatch(got, want, tol); i >= 0 {
				t.Errorf("%s %v: output %d = %v, want %v", c.name, dt, i, got[i], want[i])
			}
		}
	}
}

// checkWithConstants grad-checks a case whose noGrad inputs are fixed.
func checkWithConstants(t *testing.T, c layerCase) {
	var free []*tensor.Dense
	var freeIdx []int
	for i, x := range c.inputs {
		if !c.noGrad[i] {
			free = append(free, x)
			freeIdx = append(freeIdx, i)
		}
	}
	res, err := graph.CheckGrad(func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		all := make([]*G.Node, len(c.inputs))
		for j, i := range freeIdx {
			all[i] = in[j]
		}
		for i, x := range c.inputs {
			if c.noGrad[i] {
				all[i] = G.NewTensor(g.ExprGraph(), tensor.Float64, x.Dims(), G.WithShape(x.Shape()...), G.WithName(fmt.Sprintf("const%d", i)), G.WithValue(x))
			}
		}
		return c.build(all)
	}, free, graph.GradCheck{Seed: 2, RTol: 1e-6, ATol: 1e-8})
	if err != nil || !res.OK {
		t.Errorf("%s: %v %v", c.name, res, err)
	}
}

// weightedLoss returns Σ w ⊙ y for a fixed random w, so that the
// gradient is not a constant; a scalar y (a loss) is returned as it is.
func weightedLoss(t *testing.T, y *G.Node, dt tensor.Dtype) *G.Node {
	t.Helper()
	if y.IsScalar() {
		return y
	}
	w := G.NewTensor(y.Graph(), dt, y.Dims(), G.WithShape(y.Shape()...), G.WithName("w"), G.WithValue(toDtype(randn(78, y.Shape()...), dt)))
	wy, err := fused.Mul(y, w)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := G.Sum(wy)
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

// gradients returns the gradients of the case's weightedLoss with respect
// to its differentiable inputs, computed in dtype dt on the tape machine.
func gradients(t *testing.T, c layerCase, dt tensor.Dtype) [][]float64 {
	t.Helper()
	g, _ := graph.New(dt, 1)
	var nodes, wrt []*G.Node
	for i, in := range c.inputs {
		n, err := g.Input(fmt.Sprintf("in%d", i), in.Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
		if !c.noGrad[i] {
			wrt = append(wrt, n)
		}
	}
	y, err := c.build(nodes)
	if err != nil {
		t.Fatal(err)
	}
	loss := weightedLoss(t, y, dt)
	grads, err := g.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Compile(loss, graph.WithRespectTo(), graph.Keep(grads...))
	if err != nil {
		t.Fatal(err)
	}
	setAndRun(t, m, nodes, c, dt)
	var out [][]float64
	for _, gr := range grads {
		v, _ := m.Value(gr)
		out = append(out, append([]float64(nil), optest.Floats(t, v)...))
	}
	return out
}

// checkDoDiffMatchesTape checks that the LispMachine's DoDiff gives the
// tape machine's gradients.
func checkDoDiffMatchesTape(t *testing.T, cases []layerCase) {
	for _, c := range cases {
		tape := gradients(t, c, tensor.Float64)
		eg := G.NewGraph()
		var nodes []*G.Node
		for i, in := range c.inputs {
			nodes = append(nodes, G.NewTensor(eg, tensor.Float64, in.Dims(), G.WithShape(in.Shape()...), G.WithName(fmt.Sprintf("in%d", i)), G.WithValue(in.Clone())))
		}
		y, err := c.build(nodes)
		if err != nil {
			t.Fatal(err)
		}
		weightedLoss(t, y, tensor.Float64)
		lm := G.NewLispMachine(eg)
		if err := lm.RunAll(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		k := 0
		for i, n := range nodes {
			if c.noGrad[i] {
				continue
			}
			d, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			if got := optest.Floats(t, d); mismatch(got, tape[k], 1e-12) >= 0 {
				t.Errorf("%s input %d: Lisp gradient %v, tape %v", c.name, i, got, tape[k])
			}
			k++
		}
		lm.Close()
	}
}
