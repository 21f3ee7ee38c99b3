package optim_test

// Helpers shared by the tests: tensors from float64 values in either dtype,
// and comparisons with a stated tolerance.

import (
	"fmt"
	"math"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/graphtest"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/optim"
	"gorgonia.org/tensor"
)

var dtypes = []tensor.Dtype{tensor.Float32, tensor.Float64}

// dense and set write float64 values into a tensor of either dtype.
var dense, set = graphtest.MustDense, graphtest.MustSet

// asStored rounds vals as storing them in dtype dt would.
func asStored(dt tensor.Dtype, vals []float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		if dt == tensor.Float32 {
			v = float64(float32(v))
		}
		out[i] = v
	}
	return out
}

// randn returns n normal values from a named deterministic stream.
func randn(stream string, n int, scale float64) []float64 {
	r := rng.New(7, stream)
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * r.Normal()
	}
	return out
}

// stepRandom runs steps steps of o on one seeded parameter "w" of n
// elements, gradient s drawn from its own stream and scaled by scale(s). It
// returns the starting values and the gradients as stored in dt (the inputs
// of a float64 reference) and the parameter after the steps.
func stepRandom(t *testing.T, o optim.Optimizer, dt tensor.Dtype, steps, n int, scale func(s int) float64) (p0 []float64, grads [][]float64, params []graph.NamedTensor) {
	t.Helper()
	p0 = asStored(dt, randn("p0", n, 1))
	grads = make([][]float64, steps)
	for s := range grads {
		grads[s] = asStored(dt, randn(fmt.Sprint("g", s), n, scale(s)))
	}
	params = []graph.NamedTensor{{Name: "w", Value: dense(dt, []int{n}, p0)}}
	for s := range steps {
		if err := o.Step(params, []*tensor.Dense{dense(dt, []int{n}, grads[s])}); err != nil {
			t.Fatal(err)
		}
	}
	return p0, grads, params
}

// column returns element i of every step's gradient.
func column(grads [][]float64, i int) []float64 {
	out := make([]float64, len(grads))
	for s, g := range grads {
		out[s] = g[i]
	}
	return out
}

func clone(t *tensor.Dense) *tensor.Dense { return t.Clone().(*tensor.Dense) }

func cloneParams(ps []graph.NamedTensor) []graph.NamedTensor {
	out := make([]graph.NamedTensor, len(ps))
	for i, p := range ps {
		out[i] = graph.NamedTensor{Name: p.Name, Value: clone(p.Value)}
	}
	return out
}

// tol is a mixed tolerance: |got − want| ≤ abs + rel·|want|.
type tol struct{ abs, rel float64 }

// tolFor is the tolerance of an optimizer's result against a float64
// reference: float64 differs by rounding only; float32 stores every value
// rounded to 24 bits, and those errors accumulate over a few steps.
func tolFor(dt tensor.Dtype) tol {
	if dt == tensor.Float32 {
		return tol{abs: 1e-6, rel: 2e-6}
	}
	return tol{abs: 1e-14, rel: 1e-12}
}

// closeTo reports the first element outside the tolerance.
func closeTo(got, want []float64, tl tol) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tl.abs+tl.rel*math.Abs(want[i])) {
			return fmt.Errorf("element %d: got %.17g, want %.17g (diff %.3g)", i, got[i], want[i], got[i]-want[i])
		}
	}
	return nil
}

func mustClose(t *testing.T, what string, got, want []float64, tl tol) {
	t.Helper()
	if err := closeTo(got, want, tl); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func nanValue() float64 { return math.NaN() }
