package probe_test

import (
	"testing"

	"github.com/geluproject/gelu/graph"
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/train/probe"
	"gorgonia.org/tensor"
)

// The parameters of a 784 → 128 → 128 → 10 MLP, about 118 000 elements.
func mlpParams(dt tensor.Dtype) []graph.NamedTensor {
	var ps []graph.NamedTensor
	for _, s := range [][]int{{128, 784}, {128}, {128, 128}, {128}, {10, 128}, {10}} {
		ps = append(ps, graph.NamedTensor{Name: "p", Value: tensor.New(tensor.Of(dt), tensor.WithShape(s...))})
	}
	for i := range ps {
		ps[i].Name = string(rune('a' + i))
	}
	return ps
}

func BenchmarkMomentsAdd(b *testing.B) {
	ps := mlpParams(tensor.Float32)
	ts := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		ts[i] = p.Value
	}
	m, _ := probe.NewMoments(ps, 500)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Add(ts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShadowStep(b *testing.B) {
	ps := mlpParams(tensor.Float32)
	ts := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		ts[i] = p.Value
	}
	s, _ := probe.NewShadow(probe.HeavyBall, 0.9, ps)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Step(ts); err != nil {
			b.Fatal(err)
		}
	}
}

// One probe of 1000 examples × 256 GELU units.
func BenchmarkUnitsObserveGELU(b *testing.B) {
	pre := tensor.New(tensor.WithShape(1000, 256), tensor.Of(tensor.Float32))
	for i, v := range pre.Float32s() {
		pre.Float32s()[i] = float32(i%17)/4 - 2 + v
	}
	u, _ := probe.NewUnits(activation.GELU, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := u.Observe(0, pre, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
