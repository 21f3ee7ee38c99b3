package graph_test

// Hostile arguments: views, nil nodes, shapes whose size overflows or is
// absurd. Every case must end in a correct result or an error, never a
// panic or an allocation sized by the bad number.

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/ops/fused"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// weightedSum compiles loss = Σ (x·Iᵀ) ⊙ c for an input x of shape
// rows×cols, I the cols×cols identity and c[i][j] = 1 + i·cols + j, distinct
// per position, so the loss is Σ c ⊙ x and depends on which logical position
// each value sits at. The product goes through fused.Linear because the
// project's fused ops read the bound buffer directly, where gorgonia's own
// ops would walk a view with an iterator and hide a wrong memory order.
func weightedSum(t *testing.T, dt tensor.Dtype, rows, cols int) (*graph.Machine, *G.Node) {
	t.Helper()
	g, _ := graph.New(dt, 1)
	x, err := g.Input("x", rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	c := denseOf(dt, rows, cols, func(i, j int) float64 { return float64(1 + i*cols + j) })
	eye := denseOf(dt, cols, cols, func(i, j int) float64 {
		if i == j {
			return 1
		}
		return 0
	})
	cn := G.NewTensor(g.ExprGraph(), dt, 2, G.WithShape(rows, cols), G.WithName("c"), G.WithValue(c))
	en := G.NewTensor(g.ExprGraph(), dt, 2, G.WithShape(cols, cols), G.WithName("eye"), G.WithValue(eye))
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(fused.Linear(x, en, nil)), cn))))
	m, err := g.Compile(loss, graph.WithRespectTo())
	if err != nil {
		t.Fatal(err)
	}
	return m, x
}

func toF64(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

// denseOf returns a contiguous rows×cols tensor with element (i, j) = f(i, j).
func denseOf(dt tensor.Dtype, rows, cols int, f func(i, j int) float64) *tensor.Dense {
	v := tensor.New(tensor.Of(dt), tensor.WithShape(rows, cols))
	for i := range rows {
		for j := range cols {
			if dt == tensor.Float32 {
				v.Float32s()[i*cols+j] = float32(f(i, j))
			} else {
				v.Float64s()[i*cols+j] = f(i, j)
			}
		}
	}
	return v
}

// A transposed or sliced view must be read in its logical order: the loss
// equals Σ c[i][j]·logical(i, j) summed by hand, and the loss of the
// contiguous tensor holding the same logical values.
func TestSetViewUsesLogicalOrder(t *testing.T) {
	base := func(i, j int) float64 { return float64(10*i + j) } // distinct, exact in float32
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		views := []struct {
			name    string
			make    func() *tensor.Dense
			logical func(i, j int) float64 // element (i, j) of the 3×2 view
		}{
			{"transpose of 2×3", func() *tensor.Dense {
				v := denseOf(dt, 2, 3, base)
				if err := v.T(); err != nil {
					t.Fatal(err)
				}
				return v
			}, func(i, j int) float64 { return base(j, i) }},
			{"columns 1:3 of 3×4", func() *tensor.Dense {
				v := denseOf(dt, 3, 4, base)
				s, err := v.Slice(nil, tensor.S(1, 3))
				if err != nil {
					t.Fatal(err)
				}
				return s.(*tensor.Dense)
			}, func(i, j int) float64 { return base(i, j+1) }},
		}
		for _, c := range views {
			t.Run(fmt.Sprintf("%v/%s", dt, c.name), func(t *testing.T) {
				want := 0.0
				for i := range 3 {
					for j := range 2 {
						want += float64(1+i*2+j) * c.logical(i, j)
					}
				}
				m, x := weightedSum(t, dt, 3, 2)
				loss := func(v *tensor.Dense) float64 {
					t.Helper()
					if err := m.Set(x, v); err != nil {
						t.Fatal(err)
					}
					if err := m.Run(); err != nil {
						t.Fatal(err)
					}
					l, err := m.Loss()
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				view := c.make()
				got := loss(view)
				if got != want {
					t.Errorf("loss of the view = %v, want %v (Σ c·logical elements)", got, want)
				}
				// The bound buffer itself holds the logical elements, row-major.
				bound, err := m.Value(x)
				if err != nil {
					t.Fatal(err)
				}
				for k := range 6 {
					i, j := k/2, k%2
					if b := toF64(bound.(*tensor.Dense).Get(k)); b != c.logical(i, j) {
						t.Errorf("bound element %d = %v, want logical (%d, %d) = %v", k, b, i, j, c.logical(i, j))
					}
				}
				if cont := loss(denseOf(dt, 3, 2, c.logical)); cont != want {
					t.Errorf("loss of the contiguous equivalent = %v, want %v", cont, want)
				}
				// The view is copied, so later writes to its memory do not
				// reach the bound value, and setting the view again re-reads it.
				view2 := c.make()
				if err := m.Set(x, view2); err != nil {
					t.Fatal(err)
				}
				if dt == tensor.Float32 {
					view2.Float32s()[0] = 1000
				} else {
					view2.Float64s()[0] = 1000
				}
				m.Run()
				if l, _ := m.Loss(); l != want {
					t.Errorf("after writing to the view's memory, loss = %v, want %v (Set copies views)", l, want)
				}
			})
		}
	}
}

// A view's NaN check looks at its logical elements only: memory outside a
// slice does not make it invalid, and a NaN inside it is found.
func TestSetViewNonFiniteCheck(t *testing.T) {
	m, x := weightedSum(t, tensor.Float64, 3, 2)
	full := denseOf(tensor.Float64, 3, 4, func(i, j int) float64 {
		if j == 0 {
			return math.NaN() // outside columns 1:3
		}
		return 1
	})
	s, _ := full.Slice(nil, tensor.S(1, 3))
	if err := m.Set(x, s.(*tensor.Dense)); err != nil {
		t.Errorf("slice without NaN rejected: %v", err)
	}
	full.Float64s()[2*4+2] = math.NaN() // logical (2, 1)
	wantErr(t, m.Set(x, s.(*tensor.Dense)), "element 5 is NaN")
}

func TestMachineNilArguments(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	x, _ := g.Input("x", 2)
	w, _ := g.Param("w", graph.Constant(1), 2)
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(x, w))))
	m, err := g.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Grad(nil)
	wantErr(t, err, "nil node")
	wantErr(t, m.Set(nil, tensor.New(tensor.WithBacking([]float64{1, 2}))), "nil node")
	wantErr(t, m.Set(x, nil), "nil")
	_, err = m.Value(nil)
	wantErr(t, err, "nil node")
	_, err = g.Compile(loss, graph.WithRespectTo(nil))
	wantErr(t, err, "not in this graph")
	_, err = g.Compile(nil, graph.Keep(nil))
	wantErr(t, err, "not in this graph")

	var zero graph.Machine
	wantErr(t, zero.Run(), "not compiled")
	wantErr(t, zero.Set(x, tensor.New(tensor.WithBacking([]float64{1, 2}))), "not compiled")
	_, err = zero.Loss()
	wantErr(t, err, "not compiled")
	_, err = zero.Grads()
	wantErr(t, err, "not compiled")
	wantErr(t, zero.CheckFinite(), "not compiled")
	wantErr(t, zero.Close(), "not compiled")
	var nilM *graph.Machine
	wantErr(t, nilM.Run(), "not compiled")
	_, err = nilM.Grad(w)
	wantErr(t, err, "not compiled")
}

// 2³²·2³² wraps to 0 in int64 (2¹⁶·2¹⁶ in int32): the shape must be
// refused, not turned into an empty tensor.
func TestShapeOverflowIsRefused(t *testing.T) {
	half := 1 << (bits.UintSize / 2)
	g, _ := graph.New(tensor.Float32, 1)
	_, err := g.Param("w", graph.Zeros(), half, half)
	wantErr(t, err, "overflows")
	_, err = g.Input("x", half, half)
	wantErr(t, err, "overflows")
	_, err = g.Param("v", graph.Zeros(), 3, math.MaxInt/2, 4)
	wantErr(t, err, "overflows")
	_, err = graph.NewTensor(tensor.Float32, graph.Zeros(), rng.New(1, "t"), half, half)
	wantErr(t, err, "overflows")
}

// 2⁴⁰ elements (2³⁰ on 32-bit) fit an int but not memory: refused against MaxElements
// before anything is allocated (the test would die of out-of-memory
// otherwise), and accepted again once the limit allows it.
func TestHugeShapeIsRefusedByTheLimit(t *testing.T) {
	d := 1 << 20
	if bits.UintSize == 32 {
		d = 1 << 15 // 2³⁰ elements: above the 32-bit default, without overflow
	}
	g, _ := graph.New(tensor.Float64, 1)
	_, err := g.Param("w", graph.Zeros(), d, d)
	wantErr(t, err, "graph.MaxElements")
	_, err = g.Input("x", d, d)
	wantErr(t, err, "graph.MaxElements")
	_, err = graph.NewTensor(tensor.Float64, graph.Zeros(), rng.New(1, "t"), d, d)
	wantErr(t, err, "graph.MaxElements")

	defer func(old int) { graph.MaxElements = old }(graph.MaxElements)
	graph.MaxElements = 6
	_, err = g.Param("seven", graph.Zeros(), 7)
	wantErr(t, err, "7 elements")
	if _, err := g.Param("six", graph.Zeros(), 2, 3); err != nil {
		t.Errorf("6 elements with MaxElements 6: %v", err)
	}
}

func TestNewTensorRejectsNoShape(t *testing.T) {
	_, err := graph.NewTensor(tensor.Float32, graph.Zeros(), rng.New(1, "t"))
	wantErr(t, err, "no shape")
}

// The initializers are exported and may be called directly: inconsistent
// arguments are errors.
func TestInitFillArguments(t *testing.T) {
	r := rng.New(1, "init")
	inits := map[string]graph.Init{
		"Constant": graph.Constant(1), "Normal": graph.Normal(0, 1), "Uniform": graph.Uniform(0, 1),
		"XavierUniform": graph.XavierUniform(1), "XavierNormal": graph.XavierNormal(1),
		"KaimingNormal": graph.KaimingNormal(1), "KaimingUniform": graph.KaimingUniform(1),
		"UnitNormRows": graph.UnitNormRows(),
	}
	for name, in := range inits {
		wantErr(t, in.Fill(make([]float64, 6), []int{0, 3}, r), "shape [0 3]")
		wantErr(t, in.Fill(make([]float64, 6), []int{2, 4}, r), "6 values for shape [2 4]")
		if name != "Constant" { // the one that draws nothing
			wantErr(t, in.Fill(make([]float64, 6), []int{2, 3}, nil), "nil random stream")
		}
		if err := in.Fill(make([]float64, 6), []int{2, 3}, r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckGradArguments(t *testing.T) {
	x := tensor.New(tensor.WithBacking([]float64{1, 2}))
	_, err := graph.CheckGrad(nil, []*tensor.Dense{x}, graph.GradCheck{})
	wantErr(t, err, "nil build function")
	id := func(g *graph.Graph, in []*G.Node) (*G.Node, error) { return in[0], nil }
	for _, c := range []graph.GradCheck{{Step: math.NaN()}, {Step: -1}, {RTol: -1}, {ATol: math.Inf(1)}} {
		_, err = graph.CheckGrad(id, []*tensor.Dense{x}, c)
		wantErr(t, err, "want")
	}
	_, err = graph.CheckGradGrad(id, []*tensor.Dense{x}, graph.GradCheck{Step: math.NaN()})
	wantErr(t, err, "step")
}

// A Graph not made by New (zero value or nil) has nil maps; its builders
// must say so instead of panicking.
func TestGraphNotMadeByNew(t *testing.T) {
	for _, g := range []*graph.Graph{new(graph.Graph), nil} {
		_, err := g.Input("x", 2)
		wantErr(t, err, "not made by graph.New")
		_, err = g.Param("w", graph.Zeros(), 2)
		wantErr(t, err, "not made by graph.New")
		_, err = g.Compile(nil)
		wantErr(t, err, "not made by graph.New")
		_, err = g.Grad(nil)
		wantErr(t, err, "not made by graph.New")
	}
}

func TestScalarNilValues(t *testing.T) {
	for _, v := range []G.Value{nil, (*G.F64)(nil), (*G.F32)(nil), (*tensor.Dense)(nil)} {
		_, err := graph.Scalar(v)
		wantErr(t, err, "want a float scalar")
	}
}

// User callbacks (an Init, a BuildFunc) that panic give errors naming the
// callee, like Teacher.Forward does for its activation.
func TestCallbackPanicsBecomeErrors(t *testing.T) {
	bad := graph.InitFunc(func(dst []float64, _ []int, _ *rng.RNG) error {
		dst[len(dst)] = 1 // index out of range
		return nil
	})
	g, _ := graph.New(tensor.Float64, 1)
	_, err := g.Param("w", bad, 2)
	wantErr(t, err, "index out of range")
	_, err = graph.NewTensor(tensor.Float64, bad, rng.New(1, "t"), 2)
	wantErr(t, err, "index out of range")

	build := func(g *graph.Graph, in []*G.Node) (*G.Node, error) { return in[5], nil }
	_, err = graph.CheckGrad(build, []*tensor.Dense{tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))}, graph.GradCheck{})
	wantErr(t, err, "index out of range")
}

// CheckGrad perturbs its copies of the inputs in place; a transposed input
// must be checked in its logical order like any other. f(x) = Σ c ⊙ x² has
// the gradient 2c ⊙ x, which the checker must confirm (OK) on a view too.
func TestCheckGradOfATransposedInput(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0.5, -1, 2, 1.5, -0.25, 3}))
	if err := x.T(); err != nil {
		t.Fatal(err)
	}
	f := func(g *graph.Graph, in []*G.Node) (*G.Node, error) {
		c := denseOf(tensor.Float64, 3, 2, func(i, j int) float64 { return float64(1 + 2*i + j) })
		cn := G.NewTensor(g.ExprGraph(), tensor.Float64, 2, G.WithShape(3, 2), G.WithName("c"), G.WithValue(c))
		sq, err := G.Square(in[0])
		if err != nil {
			return nil, err
		}
		return G.Sum(G.Must(G.HadamardProd(sq, cn)))
	}
	res, err := graph.CheckGrad(f, []*tensor.Dense{x}, graph.GradCheck{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Checked != 6 {
		t.Errorf("CheckGrad of Σ c⊙x² on a transposed input: %v", res)
	}
}

func TestCompileNilOption(t *testing.T) {
	g, _ := graph.New(tensor.Float64, 1)
	w, _ := g.Param("w", graph.Constant(1), 2)
	loss := G.Must(G.Sum(w))
	_, err := g.Compile(loss, nil)
	wantErr(t, err, "option 0 is nil")
}

// Gorgonia's ops ignore masks, so a masked tensor would be computed with its
// masked-out values: Set refuses it.
func TestSetRefusesMaskedTensor(t *testing.T) {
	m, x := weightedSum(t, tensor.Float64, 1, 2)
	v := tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, 2}), tensor.WithMask([]bool{false, true}))
	wantErr(t, m.Set(x, v), "masked")
}

// FromFloat64s rounds to float32 once (0.1 becomes the float32 nearest to
// it, 13421773·2⁻²⁷), copies float64, and round-trips with Float64s;
// SetFloat64s writes in place; bad arguments get errors.
func TestFromFloat64sAndSetFloat64s(t *testing.T) {
	vals := []float64{0.1, -3, 1e300, 6}
	f32, err := graph.FromFloat64s(tensor.Float32, vals, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want32 := []float32{float32(13421773.0 / (1 << 27)), -3, float32(math.Inf(1)), 6}
	if got := f32.Float32s(); !slices.Equal(got, want32) || !slices.Equal(f32.Shape(), tensor.Shape{2, 2}) {
		t.Errorf("float32: %v of shape %v, want %v of shape (2, 2)", got, f32.Shape(), want32)
	}
	f64, err := graph.FromFloat64s(tensor.Float64, vals, 4)
	if err != nil {
		t.Fatal(err)
	}
	vals[0] = 9
	if got := graph.Float64s(f64); !slices.Equal(got, []float64{0.1, -3, 1e300, 6}) {
		t.Errorf("float64: %v, want a copy of the values before they changed", got)
	}
	if err := graph.SetFloat64s(f32, []float64{1, 2, 3, 0.1}); err != nil {
		t.Fatal(err)
	}
	if got := f32.Float32s(); !slices.Equal(got, []float32{1, 2, 3, float32(13421773.0 / (1 << 27))}) {
		t.Errorf("SetFloat64s: %v", got)
	}
	_, err = graph.FromFloat64s(tensor.Int, []float64{1}, 1)
	wantErr(t, err, "dtype int")
	_, err = graph.FromFloat64s(tensor.Float64, []float64{1, 2, 3}, 2, 2)
	wantErr(t, err, "4 elements, got 3 values")
	_, err = graph.FromFloat64s(tensor.Float64, nil, 0)
	wantErr(t, err, "non-positive")
	wantErr(t, graph.SetFloat64s(nil, nil), "nil tensor")
	wantErr(t, graph.SetFloat64s(f64, []float64{1}), "4 elements, got 1 values")
	view, _ := f32.Slice(tensor.S(0))
	wantErr(t, graph.SetFloat64s(view.(*tensor.Dense), []float64{1, 2}), "view")
	wantErr(t, graph.SetFloat64s(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2})), []float64{1, 2}), "dtype int")
}

// Float64s widens float32 exactly, copies float64 (no aliasing), reads a
// scalar-shaped tensor, and gives nil for nil or a non-float tensor.
func TestFloat64s(t *testing.T) {
	f32 := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0.1, -3}))
	if got := graph.Float64s(f32); len(got) != 2 || got[0] != float64(float32(0.1)) || got[1] != -3 {
		t.Errorf("float32: %v", got)
	}
	back := []float64{1, 2, 3}
	got := graph.Float64s(tensor.New(tensor.WithShape(3), tensor.WithBacking(back)))
	got[0] = 9
	if back[0] != 1 || got[2] != 3 {
		t.Errorf("float64: got %v, backing %v; want a copy", got, back)
	}
	if got := graph.Float64s(tensor.New(tensor.FromScalar(2.5))); len(got) != 1 || got[0] != 2.5 {
		t.Errorf("scalar: %v", got)
	}
	if got := graph.Float64s(nil); got != nil {
		t.Errorf("nil: %v", got)
	}
	if got := graph.Float64s(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))); got != nil {
		t.Errorf("int tensor: %v", got)
	}
}
