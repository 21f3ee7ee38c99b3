package dist

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"gorgonia.org/tensor"
)

// testParam is a parameter of the reducer tests; unused ones get nil
// gradients.
type testParam struct {
	name   string
	dtype  tensor.Dtype
	shape  []int
	unused bool
}

var testParams = []testParam{
	{"fc1.weight", tensor.Float32, []int{3, 5}, false},
	{"fc1.bias", tensor.Float64, []int{7}, false},
	{"fc2.weight", tensor.Float32, []int{4, 4}, false},
	{"scale", tensor.Float32, []int{1}, false},
	{"head.weight", tensor.Float64, []int{33}, false},
	{"unused", tensor.Float32, []int{2, 2}, true},
	{"fc3.weight", tensor.Float32, []int{100}, false},
}

func namedParams(ps []testParam) []graph.NamedTensor {
	out := make([]graph.NamedTensor, len(ps))
	for i, p := range ps {
		out[i] = graph.NamedTensor{Name: p.name, Value: tensor.New(tensor.Of(p.dtype), tensor.WithShape(p.shape...))}
	}
	return out
}

// rankGrads are rank r's gradients at a step: seeded normals, so that
// every rank can compute every other rank's.
func rankGrads(ps []testParam, r, step int) []*tensor.Dense {
	out := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		if p.unused {
			continue
		}
		src := rng.New(7, fmt.Sprintf("rank %d step %d param %d", r, step, i))
		t := tensor.New(tensor.Of(p.dtype), tensor.WithShape(p.shape...))
		if p.dtype == tensor.Float32 {
			for j := range t.Float32s() {
				t.Float32s()[j] = float32(src.Normal())
			}
		} else {
			for j := range t.Float64s() {
				t.Float64s()[j] = src.Normal()
			}
		}
		out[i] = t
	}
	return out
}

// rankOrderMean is the deterministic mode's result, written out:
// x_r = g_r·share_r rounded to T (share rounded to T first), summed
// ((x₀ + x₁) + x₂) + … in T. sumAbs is Σ_r |x_r|, for rounding bounds.
func rankOrderMean[T float](grads [][]T, shares []float64) (sum, sumAbs []T) {
	sum, sumAbs = make([]T, len(grads[0])), make([]T, len(grads[0]))
	for r, g := range grads {
		s := T(shares[r])
		for j, v := range g {
			x := v * s
			if r == 0 {
				sum[j] = x
			} else {
				sum[j] += x
			}
			sumAbs[j] += T(math.Abs(float64(x)))
		}
	}
	return sum, sumAbs
}

func data[T float](t *tensor.Dense) []T {
	if t == nil {
		return nil
	}
	return t.Data().([]T)
}

// checkMean compares the reduced gradient got of one parameter with the
// rank-order reference: bit for bit in the deterministic mode; in the
// default mode within 2·γ_{N−1}·Σ_r|x_r| (both are sums of the same N
// rounded terms, each within γ_{N−1}·Σ|x_r| of their exact sum).
func checkMean[T float](t *testing.T, what string, got []T, all [][]T, shares []float64, exact bool, unit float64) {
	t.Helper()
	want, abs := rankOrderMean(all, shares)
	n := float64(len(all) - 1)
	gamma := n * unit / (1 - n*unit)
	for j := range got {
		d := math.Abs(float64(got[j]) - float64(want[j]))
		if exact && math.Float64bits(float64(got[j])) != math.Float64bits(float64(want[j])) ||
			!exact && d > 2*gamma*float64(abs[j]) {
			t.Fatalf("%s: element %d is %v, want %v (rank-order sum; exact=%v, bound %.3g)", what, j, got[j], want[j], exact, 2*gamma*float64(abs[j]))
		}
	}
}

// TestRankReducer averages seeded gradients over the ranks for four
// steps, in both modes, with and without overlap, with small buckets
// (several per step, padded for 3 ranks), gradients handed over through
// Ready in backward order, or only at Wait, or through Ready on rank 0
// alone (the others' collectives must still match), and an uneven share
// in step 2. Between steps 2 and 3 a step that the last rank Discards
// must complete on every rank.
func TestRankReducer(t *testing.T) {
	c := inJob(t)
	n, me := c.Size(), c.Rank()
	for _, mode := range []Options{{}, {Deterministic: true}, {Overlap: true}, {Deterministic: true, Overlap: true}} {
		t.Run(fmt.Sprintf("deterministic=%v/overlap=%v", mode.Deterministic, mode.Overlap), func(t *testing.T) {
			det := mode.Deterministic
			mode.BucketBytes = 96
			params := namedParams(testParams)
			red, err := NewReducer(c, params, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer red.Close()
			if red.Buckets() < 4 {
				t.Fatalf("%d buckets, want several", red.Buckets())
			}
			for step := range 4 {
				shares := make([]float64, n)
				for r := range shares {
					shares[r] = 1 / float64(n)
				}
				if step == 2 {
					// 64 examples over the ranks, as Shard cuts them.
					for r := range shares {
						lo, hi, _ := Shard(64, r, n)
						shares[r] = float64(hi-lo) / 64
					}
					lo, hi, _ := Shard(64, me, n)
					if err := red.SetShare(hi-lo, 64); err != nil {
						t.Fatal(err)
					}
				}
				if step == 3 {
					if err := red.SetShare(1, n); err != nil {
						t.Fatal(err)
					}
					// A step the last rank abandons.
					grads := rankGrads(testParams, me, 9)
					var err error
					if me == n-1 {
						err = red.Discard()
					} else {
						err = red.Wait(context.Background(), grads)
					}
					if err != nil {
						t.Fatalf("discarded step: %v", err)
					}
				}
				grads := rankGrads(testParams, me, step)
				if step == 3 && me == 0 {
					for i := len(grads) - 1; i >= 0; i-- {
						if err := red.Ready(i, grads[i]); err != nil {
							t.Fatal(err)
						}
					}
				} else if step != 1 && step != 3 {
					for i := len(grads) - 1; i >= 0; i-- {
						if err := red.Ready(i, grads[i]); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := red.Wait(context.Background(), grads); err != nil {
					t.Fatal(err)
				}
				for i, p := range testParams {
					what := fmt.Sprintf("step %d, %q", step, p.name)
					if p.unused {
						if grads[i] != nil {
							t.Fatalf("%s: unused parameter got a gradient", what)
						}
						continue
					}
					if p.dtype == tensor.Float32 {
						var all [][]float32
						for r := range n {
							all = append(all, data[float32](rankGrads(testParams, r, step)[i]))
						}
						checkMean(t, what, data[float32](grads[i]), all, shares, det, 0x1p-24)
					} else {
						var all [][]float64
						for r := range n {
							all = append(all, data[float64](rankGrads(testParams, r, step)[i]))
						}
						checkMean(t, what, data[float64](grads[i]), all, shares, det, 0x1p-53)
					}
				}
				// Every rank holds the same bits.
				var got []graph.NamedTensor
				for i, g := range grads {
					if g != nil {
						got = append(got, graph.NamedTensor{Name: testParams[i].name, Value: g})
					}
				}
				if err := CheckParams(c, got); err != nil {
					t.Fatalf("step %d: the averaged gradients differ across ranks: %v", step, err)
				}
			}
		})
	}
}

// TestReducerLayout checks the buckets for a small cap: parameters last to
// first, one type per bucket, a parameter larger than the cap alone.
func TestReducerLayout(t *testing.T) {
	ps := []testParam{
		{"a", tensor.Float32, []int{10}, false}, // 40 bytes
		{"b", tensor.Float64, []int{3}, false},  // 24 bytes
		{"c", tensor.Float32, []int{5}, false},  // 20 bytes
		{"d", tensor.Float32, []int{20}, false}, // 80 bytes: over the cap
	}
	red, err := NewReducer(Single(), namedParams(ps), Options{BucketBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	// d alone; then c, which a joins (60 bytes); b in a float64 bucket.
	want := [][]int{{3}, {2, 0}, {1}}
	if len(red.bucket) != len(want) {
		t.Fatalf("%d buckets, want %d", len(red.bucket), len(want))
	}
	for j, b := range red.bucket {
		if fmt.Sprint(b.params) != fmt.Sprint(want[j]) {
			t.Errorf("bucket %d holds parameters %v, want %v", j, b.params, want[j])
		}
	}
}

// TestReducerSingle runs the Reducer on one process: the mean over one
// rank is the gradient itself, a share of 1/2 halves it exactly, and
// misuse is an error naming the parameter.
func TestReducerSingle(t *testing.T) {
	for _, det := range []bool{false, true} {
		params := namedParams(testParams)
		red, err := NewReducer(Single(), params, Options{BucketBytes: 64, Deterministic: det})
		if err != nil {
			t.Fatal(err)
		}
		grads := rankGrads(testParams, 0, 0)
		want := rankGrads(testParams, 0, 0)
		if err := red.Ready(0, grads[0]); err != nil {
			t.Fatal(err)
		}
		if err := red.Wait(context.Background(), grads); err != nil {
			t.Fatal(err)
		}
		if err := red.SetShare(1, 2); err != nil {
			t.Fatal(err)
		}
		if err := red.Wait(context.Background(), grads); err != nil {
			t.Fatal(err)
		}
		for i := range grads {
			if testParams[i].unused {
				if grads[i] != nil {
					t.Fatal("unused parameter got a gradient")
				}
				continue
			}
			if testParams[i].dtype == tensor.Float32 {
				for j, v := range data[float32](grads[i]) {
					if w := data[float32](want[i])[j] / 2; v != w {
						t.Fatalf("%s[%d] = %v, want %v", testParams[i].name, j, v, w)
					}
				}
			} else {
				for j, v := range data[float64](grads[i]) {
					if w := data[float64](want[i])[j] / 2; v != w {
						t.Fatalf("%s[%d] = %v, want %v", testParams[i].name, j, v, w)
					}
				}
			}
		}
	}

	red, err := NewReducer(Single(), namedParams(testParams), Options{})
	if err != nil {
		t.Fatal(err)
	}
	grads := rankGrads(testParams, 0, 0)
	wrong := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(5, 3))
	other := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(3, 5))
	for _, c := range []struct {
		do   func() error
		want string
	}{
		{func() error { return red.Ready(0, wrong) }, `gradient of "fc1.weight" is float32(5, 3), want float32(3, 5)`},
		{func() error { return red.Ready(1, grads[0]) }, `gradient of "fc1.bias" is float32(3, 5), want float64(7)`},
		{func() error { return red.Ready(9, nil) }, "parameter 9, want 0 ≤ i < 7"},
		{func() error { return red.Wait(context.Background(), grads[:3]) }, "3 gradients for 7 parameters"},
		{func() error { return red.Ready(0, grads[0]) }, ""},
		{func() error { return red.Ready(0, grads[0]) }, `gradient of "fc1.weight" handed over twice`},
		{func() error { return red.SetShare(1, 2) }, "already handed over"},
		{func() error {
			g := append([]*tensor.Dense(nil), grads...)
			g[0] = other
			return red.Wait(context.Background(), g)
		}, `the gradient of "fc1.weight" is not the tensor handed to Ready`},
	} {
		err := c.do()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("got error %v, want one containing %q", err, c.want)
		}
	}
	if err := red.SetShare(3, 2); err == nil {
		t.Error("SetShare(3, 2) accepted")
	}
	for _, o := range []Options{{BucketBytes: -1}, {Timeout: -1}} {
		if _, err := NewReducer(Single(), namedParams(testParams), o); err == nil {
			t.Errorf("NewReducer with %+v accepted", o)
		}
	}
	dup := namedParams(testParams[:2])
	dup[1].Name = dup[0].Name
	if _, err := NewReducer(Single(), dup, Options{}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate names: %v", err)
	}
}
