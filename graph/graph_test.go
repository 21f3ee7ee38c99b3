package graph_test

import (
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/activation"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), substr) {
		t.Errorf("got error %v, want one containing %q", err, substr)
	}
}

func TestNewRejectsNonFloatDtype(t *testing.T) {
	_, err := graph.New(tensor.Int, 1)
	wantErr(t, err, "dtype int")
}

func TestInputAndParamValidation(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	if _, err := g.Input("x", 2, 3); err != nil {
		t.Fatal(err)
	}
	_, err := g.Input("x", 4)
	wantErr(t, err, "already used")
	_, err = g.Param("w", graph.Zeros(), 3, 0)
	wantErr(t, err, "non-positive")
	_, err = g.Param("w", nil, 3)
	wantErr(t, err, "init is nil")
	_, err = g.Param("", graph.Zeros(), 3)
	wantErr(t, err, "empty name")
	_, err = g.Input("s")
	wantErr(t, err, "no shape")
	_, err = g.Param("bad", graph.Normal(0, -1), 3)
	wantErr(t, err, "std ≥ 0")
	_, err = g.Param("w1", graph.XavierUniform(1), 3)
	wantErr(t, err, "at least 2 dimensions")
}

// NumParams counts parameters' scalars, not inputs': 2·3 + 3 + 1 = 10.
func TestNumParams(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	if n := g.NumParams(); n != 0 {
		t.Errorf("empty graph: %d parameters, want 0", n)
	}
	_, err1 := g.Input("x", 5, 2)
	_, err2 := g.Param("w", graph.Zeros(), 2, 3)
	_, err3 := g.Param("b", graph.Zeros(), 3)
	_, err4 := g.Param("s", graph.Zeros(), 1)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if n := g.NumParams(); n != 10 {
		t.Errorf("%d parameters, want 10", n)
	}
}

// Same seed and name give the same values whatever else is in the graph;
// float32 parameters are the float64 values rounded.
func TestParamInitIsSeededPerName(t *testing.T) {
	values := func(dt tensor.Dtype, seed uint64, extra bool) []float64 {
		g, _ := graph.New(dt, seed)
		if extra {
			g.Param("other", graph.Normal(0, 1), 50)
		}
		p, err := g.Param("fc1.weight", graph.Normal(0, 1), 4, 5)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		switch d := p.Value().(*tensor.Dense).Data().(type) {
		case []float32:
			for _, x := range d {
				out = append(out, float64(x))
			}
		case []float64:
			out = d
		}
		return out
	}
	a, b := values(tensor.Float64, 7, false), values(tensor.Float64, 7, true)
	c := values(tensor.Float64, 8, false)
	f := values(tensor.Float32, 7, false)
	r := rng.New(7, "fc1.weight")
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("element %d depends on other parameters: %v vs %v", i, a[i], b[i])
		}
		if want := r.Normal(); a[i] != want {
			t.Fatalf("element %d = %v, want the stream's %v", i, a[i], want)
		}
		if f[i] != float64(float32(a[i])) {
			t.Fatalf("float32 element %d = %v, want %v rounded", i, f[i], a[i])
		}
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("a different seed gave the same values")
	}
}

func TestInitializerStatistics(t *testing.T) {
	const out, in = 200, 300
	fill := func(init graph.Init, shape ...int) []float64 {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float64, n)
		if err := init.Fill(v, shape, rng.New(1, "stats")); err != nil {
			t.Fatal(err)
		}
		return v
	}
	moments := func(v []float64) (mean, std, maxAbs float64) {
		for _, x := range v {
			mean += x
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
		mean /= float64(len(v))
		for _, x := range v {
			std += (x - mean) * (x - mean)
		}
		return mean, math.Sqrt(std / float64(len(v))), maxAbs
	}
	n := float64(out * in)
	cases := []struct {
		name  string
		init  graph.Init
		std   float64 // expected standard deviation
		bound float64 // expected max |x| for uniform inits (0: normal)
	}{
		{"Normal", graph.Normal(0, 0.02), 0.02, 0},
		{"Uniform", graph.Uniform(-0.5, 0.5), 1 / math.Sqrt(12), 0.5},
		{"XavierUniform", graph.XavierUniform(1), math.Sqrt(2.0 / (in + out)), math.Sqrt(6.0 / (in + out))},
		{"XavierNormal", graph.XavierNormal(1), math.Sqrt(2.0 / (in + out)), 0},
		{"KaimingNormal", graph.KaimingNormal(math.Sqrt2), math.Sqrt(2.0 / in), 0},
		{"KaimingUniform", graph.KaimingUniform(math.Sqrt(1.0 / 3)), 1 / math.Sqrt(3*in), 1 / math.Sqrt(in)},
	}
	for _, c := range cases {
		mean, std, maxAbs := moments(fill(c.init, out, in))
		// Sampling error of the sd estimate is about sd/√(2n); allow 5 of them.
		if math.Abs(mean) > 5*c.std/math.Sqrt(n) || math.Abs(std-c.std) > 5*c.std/math.Sqrt(2*n) {
			t.Errorf("%s: mean %v, std %v; want 0, %v", c.name, mean, std, c.std)
		}
		if c.bound > 0 && (maxAbs > c.bound || maxAbs < 0.99*c.bound) {
			t.Errorf("%s: max |x| = %v, want just under %v", c.name, maxAbs, c.bound)
		}
	}
	rows := fill(graph.UnitNormRows(), 10, 30)
	for r := 0; r < 10; r++ {
		var ss float64
		for _, x := range rows[r*30 : (r+1)*30] {
			ss += x * x
		}
		if math.Abs(ss-1) > 1e-14 {
			t.Errorf("UnitNormRows row %d has squared norm %v", r, ss)
		}
	}
	for _, v := range fill(graph.Constant(2.5), 3, 3) {
		if v != 2.5 {
			t.Fatalf("Constant(2.5) gave %v", v)
		}
	}
}

// mlp builds a small composite function: Σ_ij GELU(x·Wᵀ)_ij · c_ij.
func mlp(act activation.Activation) graph.BuildFunc {
	return func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		wt, err := G.Transpose(in[1])
		if err != nil {
			return nil, err
		}
		h, err := G.Mul(in[0], wt)
		if err != nil {
			return nil, err
		}
		a, err := act.Apply(h)
		if err != nil {
			return nil, err
		}
		return G.Tanh(a)
	}
}

func randTensor(seed uint64, shape ...int) *tensor.Dense {
	t, err := graph.NewTensor(tensor.Float64, graph.Normal(0, 1), rng.New(seed, "t"), shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func TestGradAndGradGradOfCompositeGraph(t *testing.T) {
	inputs := []*tensor.Dense{randTensor(1, 3, 4), randTensor(2, 5, 4)}
	for _, act := range []activation.Activation{activation.GELU, activation.GELUTanh, activation.SiLU} {
		res, err := graph.CheckGrad(mlp(act), inputs, graph.GradCheck{Seed: 1})
		if err != nil || !res.OK {
			t.Errorf("%s CheckGrad: %v %v", act, res, err)
		}
		// The Hessian-vector product through matmul, GELU and tanh. Gorgonia's
		// own Grad gets this wrong (it reuses first-pass derivatives).
		res, err = graph.CheckGradGrad(mlp(act), inputs, graph.GradCheck{Seed: 1})
		if err != nil || !res.OK {
			t.Errorf("%s CheckGradGrad: %v %v", act, res, err)
		}
	}
}

// brokenOp is x ↦ 2x with a deliberately wrong derivative (3 instead of 2),
// to show the checker can fail.
type brokenOp struct{}

func (brokenOp) Arity() int { return 1 }
func (brokenOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (brokenOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return ds[0].(tensor.Shape).Clone(), nil
}
func (brokenOp) Do(vs ...G.Value) (G.Value, error) {
	x := vs[0].(*tensor.Dense)
	out := x.Clone().(*tensor.Dense)
	for i := range out.Float64s() {
		out.Float64s()[i] *= 2
	}
	return out, nil
}
func (brokenOp) ReturnsPtr() bool      { return false }
func (brokenOp) CallsExtern() bool     { return false }
func (brokenOp) OverwritesInput() int  { return -1 }
func (brokenOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "broken") }
func (brokenOp) Hashcode() uint32      { return 7 }
func (brokenOp) String() string        { return "broken" }
func (brokenOp) DiffWRT(int) []bool    { return []bool{true} }
func (brokenOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.Mul(grad, G.NewConstant(3.0))
	return G.Nodes{d}, err
}

func TestCheckGradDetectsAWrongGradient(t *testing.T) {
	res, err := graph.CheckGrad(func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		return G.ApplyOp(brokenOp{}, in[0])
	}, []*tensor.Dense{randTensor(3, 4)}, graph.GradCheck{})
	if !errors.Is(err, graph.ErrGradCheck) {
		t.Fatalf("a wrong gradient gave error %v, want one wrapping graph.ErrGradCheck", err)
	}
	// The error names the worst element, and the result is still filled in.
	wantErr(t, err, fmt.Sprintf("%q element %d", res.Name, res.Index))
	if res.OK || res.Name != "input0" || res.Checked != 4 || math.Abs(res.WorstRelErr-0.5) > 1e-6 {
		t.Errorf("a gradient off by 3/2 passed or was mismeasured: %v", res)
	}
	if math.Abs(res.Analytic-1.5*res.Numeric) > 1e-6*math.Abs(res.Numeric) {
		t.Errorf("analytic %v, numeric %v at the worst element, want analytic = 3/2 numeric", res.Analytic, res.Numeric)
	}
}

// noDiffOp has no symbolic derivative at all.
type noDiffOp struct{ brokenOp }

func TestGradErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	y, _ := g.Input("y", 3)
	nd, err := G.ApplyOp(struct{ G.Op }{noDiffOp{}}, x)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := G.Sum(nd)
	_, err = g.Grad(s, x)
	wantErr(t, err, "has no symbolic derivative")

	sx, _ := G.Sum(x)
	_, err = g.Grad(sx, y)
	wantErr(t, err, `"y" does not affect`)
	_, err = g.Grad(x, x)
	wantErr(t, err, "want a scalar")
	_, err = g.Grad(sx)
	wantErr(t, err, "no nodes")
}

func TestMachineSetAndRunErrors(t *testing.T) {
	g, _ := graph.New(tensor.Float32, 1)
	x, _ := g.Input("x", 2, 3)
	w, _ := g.Param("w", graph.Normal(0, 1), 2, 3)
	p, _ := G.HadamardProd(x, w)
	h, _ := activation.GELU.Apply(p)
	loss, _ := G.Sum(h)
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, m.Run(), `input "x" (2, 3) has no value`)
	wantErr(t, m.Set(x, tensor.New(tensor.WithShape(3, 2), tensor.Of(tensor.Float32))), "want float32(2, 3)")
	wantErr(t, m.Set(x, tensor.New(tensor.WithShape(2, 3), tensor.Of(tensor.Float64))), "got float64(2, 3)")
	bad := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0, 1, float32(math.NaN()), 0, 0, 0}))
	wantErr(t, m.Set(x, bad), "element 2 is NaN")
	wantErr(t, m.Set(w, tensor.New(tensor.WithShape(2, 3), tensor.Of(tensor.Float32))), "not an input")
	_, err = m.Value(p)
	wantErr(t, err, "pass it to graph.Keep")
	_, err = m.Grad(x)
	wantErr(t, err, "not among the machine's parameters")
}

// Run twice with the same data: the gradients are equal, not doubled.
func TestGradientsDoNotAccumulateAcrossRuns(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 4)
	w, _ := g.Param("w", graph.Normal(0, 1), 4)
	p, _ := G.HadamardProd(x, w)
	h, _ := activation.GELU.Apply(p)
	loss, _ := G.Sum(h)
	m, _ := g.Compile(loss)
	m.Set(x, tensor.New(tensor.WithBacking([]float64{1, -2, 0.5, 3})))
	var first []float64
	for run := 0; run < 3; run++ {
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		d, _ := m.Grad(w)
		if run == 0 {
			first = append(first, d.Float64s()...)
			continue
		}
		for i := range first {
			if d.Float64s()[i] != first[i] {
				t.Fatalf("run %d: gradient %v, first run %v", run, d.Float64s(), first)
			}
		}
	}
}

// An intermediate whose memory gorgonia reuses for a later in-place op keeps
// its own value when it is kept.
func TestKeptIntermediateSurvivesInPlaceOps(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 3)
	h, _ := activation.GELU.Apply(x)
	y, _ := G.Add(h, h) // may write into h's memory
	z, _ := G.Tanh(y)
	loss, _ := G.Sum(z)
	m, err := g.Compile(loss, graph.WithRespectTo(), graph.Keep(h))
	if err != nil {
		t.Fatal(err)
	}
	xs := []float64{-1, 0.5, 2}
	m.Set(x, tensor.New(tensor.WithBacking(append([]float64(nil), xs...))))
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(h)
	for i, xi := range xs {
		if got := v.(*tensor.Dense).Float64s()[i]; got != activation.GELU.F(xi) {
			t.Errorf("kept GELU(%v) = %v, want %v", xi, got, activation.GELU.F(xi))
		}
	}
}

func TestCheckFiniteNamesTheTensor(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2)
	w, _ := g.Param("w", graph.Constant(1), 2)
	p, _ := G.HadamardProd(x, w)
	loss, _ := G.Sum(p)
	m, _ := g.Compile(loss, graph.AllowNonFinite())
	m.Set(x, tensor.New(tensor.WithBacking([]float64{1, math.Inf(1)})))
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	err := m.CheckFinite()
	if !errors.Is(err, graph.ErrNonFinite) {
		t.Fatalf("got %v, want ErrNonFinite", err)
	}
	wantErr(t, err, `loss`)
	m.Set(x, tensor.New(tensor.WithBacking([]float64{1, 2})))
	m.Run()
	if err := m.CheckFinite(); err != nil {
		t.Errorf("finite run reported %v", err)
	}
}

// (n), (1, n) and (n, 1) are different shapes for Set, although
// tensor.Shape.Eq says otherwise.
func TestSetRejectsTransposedVector(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 1, 3)
	s, _ := G.Sum(x)
	m, err := g.Compile(s, graph.WithRespectTo())
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, m.Set(x, tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))), "want float64(1, 3)")
	wantErr(t, m.Set(x, tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float64{1, 2, 3}))), "want float64(1, 3)")
}

// NewTensor fills as Param does: the stream's samples through the Init,
// rounded once to the dtype.
func TestNewTensor(t *testing.T) {
	r := rng.New(7, "data")
	want := make([]float64, 6)
	for i := range want {
		want[i] = 2 + 3*r.Normal()
	}
	v64, err := graph.NewTensor(tensor.Float64, graph.Normal(2, 3), rng.New(7, "data"), 2, 3)
	if err != nil || !slices.Equal(v64.Float64s(), want) || !v64.Shape().Eq(tensor.Shape{2, 3}) {
		t.Errorf("float64: %v %v, err %v; want %v", v64.Shape(), v64.Data(), err, want)
	}
	v32, err := graph.NewTensor(tensor.Float32, graph.Normal(2, 3), rng.New(7, "data"), 6)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v32.Float32s() {
		if x != float32(want[i]) {
			t.Errorf("float32[%d] = %v, want %v", i, x, float32(want[i]))
		}
	}
	for name, f := range map[string]func() error{
		"dtype":  func() error { _, err := graph.NewTensor(tensor.Int, graph.Zeros(), r, 2); return err },
		"shape":  func() error { _, err := graph.NewTensor(tensor.Float64, graph.Zeros(), r, 2, 0); return err },
		"init":   func() error { _, err := graph.NewTensor(tensor.Float64, nil, r, 2); return err },
		"stream": func() error { _, err := graph.NewTensor(tensor.Float64, graph.Zeros(), nil, 2); return err },
		"fill":   func() error { _, err := graph.NewTensor(tensor.Float64, graph.Normal(0, -1), r, 2); return err },
	} {
		if f() == nil {
			t.Errorf("bad %s: no error", name)
		}
	}
}
