package probe_test

import (
	"math"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

func TestSamplerDrawsRowsWithReplacement(t *testing.T) {
	const n, batch, draws = 5, 4, 2000
	d := &datasets.Dataset{Name: "tiny", Features: 2, Classes: 5}
	for i := 0; i < n; i++ {
		d.X = append(d.X, float32(i), float32(10*i))
		d.Labels = append(d.Labels, i)
	}
	for _, dt := range dtypes {
		s, err := probe.NewSampler(d, batch, dt, 7, "test")
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := probe.NewSampler(d, batch, dt, 7, "test")
		counts := make([]int, n)
		repeats := 0
		for k := 0; k < draws; k++ {
			x, y, labels := s.Next()
			xv, yv := graph.Float64s(x), graph.Float64s(y)
			seen := map[int]bool{}
			for i := 0; i < batch; i++ {
				row := int(xv[2*i])
				if xv[2*i+1] != float64(10*row) || yv[i] != float64(row) || labels[i] != row {
					t.Fatalf("%v: row %d of draw %d is (%v, %v) label %v/%v: not a dataset row with its label", dt, i, k, xv[2*i], xv[2*i+1], yv[i], labels[i])
				}
				counts[row]++
				if seen[row] {
					repeats++
				}
				seen[row] = true
			}
			x2, _, _ := s2.Next()
			if v := graph.Float64s(x2); v[0] != xv[0] || v[6] != xv[6] {
				t.Fatalf("%v: the same seed and stream gave different batches", dt)
			}
		}
		// Uniform draws: each count is Binomial(8000, 1/5), sd ≈ 36.
		for i, c := range counts {
			if math.Abs(float64(c)-draws*batch/n) > 5*math.Sqrt(draws*batch*0.2*0.8) {
				t.Errorf("%v: row %d drawn %d times of %d", dt, i, c, draws*batch)
			}
		}
		// P(no repeat in 4 draws from 5) = 5·4·3·2/5⁴ = 0.192; repeats must occur.
		if repeats == 0 {
			t.Errorf("%v: no row ever repeated within a batch: not drawing with replacement", dt)
		}
	}
	if _, err := probe.NewSampler(d, 0, tensor.Float32, 1, "x"); err == nil {
		t.Error("batch size 0 accepted")
	}
	if _, err := probe.NewSampler(d, 2, tensor.Int, 1, "x"); err == nil {
		t.Error("int dtype accepted")
	}
}
