package probe_test

import (
	"math"
	"strings"
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/graph/rng"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// twoTensors is a parameter list of a 2×3 and a 4-element tensor.
func twoTensors(dt tensor.Dtype) []graph.NamedTensor {
	return []graph.NamedTensor{
		{Name: "w", Value: tensor.New(tensor.Of(dt), tensor.WithShape(2, 3))},
		{Name: "b", Value: tensor.New(tensor.Of(dt), tensor.WithShape(4))},
	}
}

// TestMomentsMatchTwoPass compares every statistic with a direct two-pass
// computation over the stored series. The values sit on a large offset
// (1e4) with a spread of about 1, which a naive Σx² − n·x̄² in float64
// would get wrong in the fifth digit.
func TestMomentsMatchTwoPass(t *testing.T) {
	const n, blockLen = 103, 25 // the last block is incomplete
	for _, dt := range dtypes {
		ps := twoTensors(dt)
		m, err := probe.NewMoments(ps, blockLen)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(1, "moments")
		series := make([][]float64, 10) // per element, over time
		for step := 0; step < n; step++ {
			vals := make([]float64, 10)
			for j := range vals {
				vals[j] = 1e4*float64(j%3) + r.Normal() + 0.3*float64(step%5)
				if dt == tensor.Float32 {
					vals[j] = float64(float32(vals[j]))
				}
				series[j] = append(series[j], vals[j])
			}
			if err := m.Add([]*tensor.Dense{dense(dt, []int{2, 3}, vals[:6]), dense(dt, []int{4}, vals[6:])}); err != nil {
				t.Fatal(err)
			}
		}
		if m.N() != n || m.Blocks() != 5 {
			t.Fatalf("%v: N = %d, blocks = %d, want %d and 5", dt, m.N(), m.Blocks(), n)
		}
		type ref struct{ mean, v, lag float64 }
		refs := make([]ref, 10)
		for j, xs := range series {
			var s float64
			for _, x := range xs {
				s += x
			}
			mean := s / n
			var v, lag float64
			for i, x := range xs {
				v += (x - mean) * (x - mean)
				if i > 0 {
					lag += (x - mean) * (xs[i-1] - mean)
				}
			}
			refs[j] = ref{mean, v / (n - 1), lag / (n - 1)}
		}
		for i, span := range [][2]int{{0, 6}, {6, 10}} {
			mean, v := m.Mean(i), m.Var(i)
			tot, err := m.Total(i)
			if err != nil {
				t.Fatal(err)
			}
			var sv, sm2, slag float64
			blocks := make([]float64, 5)
			for j := span[0]; j < span[1]; j++ {
				rf := refs[j]
				if !near(mean[j-span[0]], rf.mean, 1e-12) || !near(v[j-span[0]], rf.v, 1e-9) {
					t.Errorf("%v element %d: mean %v var %v, want %v %v", dt, j, mean[j-span[0]], v[j-span[0]], rf.mean, rf.v)
				}
				sv += rf.v
				sm2 += rf.mean * rf.mean
				slag += rf.lag
				for b := range blocks {
					lo, hi := b*blockLen, min((b+1)*blockLen, n)
					var q float64
					for _, x := range series[j][lo:hi] {
						q += (x - rf.mean) * (x - rf.mean)
					}
					blocks[b] += q / float64(hi-lo)
				}
			}
			if !near(tot.Var, sv, 1e-9) || !near(tot.MeanSq, sm2, 1e-12) || !near(tot.Lag1, slag, 1e-8) || tot.Elements != span[1]-span[0] {
				t.Errorf("%v tensor %d: totals %+v, want var %v meanSq %v lag1 %v", dt, i, tot, sv, sm2, slag)
			}
			for b := range blocks {
				if !near(tot.Blocks[b], blocks[b], 1e-9) {
					t.Errorf("%v tensor %d block %d: %v, want %v", dt, i, b, tot.Blocks[b], blocks[b])
				}
			}
		}
		all, _ := m.Total(-1)
		t0, _ := m.Total(0)
		t1, _ := m.Total(1)
		if !near(all.Var, t0.Var+t1.Var, 1e-12) || !near(all.Blocks[4], t0.Blocks[4]+t1.Blocks[4], 1e-12) {
			t.Errorf("%v: Total(−1) %+v is not the sum of the tensors' %+v, %+v", dt, all, t0, t1)
		}
	}
}

func near(got, want, rtol float64) bool {
	return math.Abs(got-want) <= rtol*math.Max(1, math.Abs(want))
}

func TestMomentsRejectBadInput(t *testing.T) {
	if _, err := probe.NewMoments(nil, 0); err == nil {
		t.Error("no tensors accepted")
	}
	if _, err := probe.NewMoments(twoTensors(tensor.Float64), -1); err == nil {
		t.Error("negative block length accepted")
	}
	m, _ := probe.NewMoments(twoTensors(tensor.Float64), 2)
	good := []*tensor.Dense{dense(tensor.Float64, []int{2, 3}, make([]float64, 6)), dense(tensor.Float64, []int{4}, make([]float64, 4))}
	for _, tc := range []struct {
		ts   []*tensor.Dense
		want string
	}{
		{good[:1], "1 tensors, want 2"},
		{[]*tensor.Dense{good[0], dense(tensor.Float64, []int{5}, make([]float64, 5))}, `"b"`},
		{[]*tensor.Dense{good[0], dense(tensor.Float32, []int{4}, []float64{0, 0, math.Inf(1), 0})}, `"b" element 2 is not finite`},
		{[]*tensor.Dense{good[0], tensor.New(tensor.Of(tensor.Int), tensor.WithShape(4))}, "want float32 or float64"},
	} {
		if err := m.Add(tc.ts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one mentioning %s", err, tc.want)
		}
	}
	if m.N() != 0 || m.Blocks() != 0 {
		t.Errorf("rejected observations were recorded: N = %d, blocks = %d", m.N(), m.Blocks())
	}
	if _, err := m.Total(0); err == nil {
		t.Error("Total with no observations gave no error")
	}
	m.Add(good)
	m.Add(good)
	if _, err := m.Total(2); err == nil || !strings.Contains(err.Error(), "tensor 2") {
		t.Errorf("Total(2): %v", err)
	}
	tot, err := m.Total(-1)
	if err != nil || tot.Var != 0 || tot.Lag1 != 0 {
		t.Errorf("constant series: %+v, %v", tot, err)
	}
}
