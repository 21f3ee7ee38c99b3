package probe

import (
	"testing"

	"github.com/geluproject/gelu/train/report"
)

// TestSummaryRecord records a hand-made summary of two tensors and one
// buffer and reads the values back by their keys.
func TestSummaryRecord(t *testing.T) {
	r, err := report.New(t.TempDir(), "record")
	if err != nil {
		t.Fatal(err)
	}
	s := Summary{Name: "frozen", Tensors: []string{"w", "b"},
		Grad:    []Totals{{Var: 1, MeanSq: 2}, {Var: 3, MeanSq: 4}, {Var: 4, MeanSq: 6}},
		Buffers: []Comparison{{Form: EMA, Beta: 0.9, Ratio: 0.05, GradVar: 4}}, UnitMean: 0.5, UnitMeanSq: 0.3}
	if err := s.Record(r, "gelu.frozen"); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{
		"grad.gelu.frozen.w.var": 1, "grad.gelu.frozen.b.mean_sq": 4, "grad.gelu.frozen.all.var": 4, "grad.gelu.frozen.all.mean_sq": 6,
		"net.gelu.frozen.E_d1": 0.5, "net.gelu.frozen.E_d1sq": 0.3,
		"momentum.gelu.frozen.ema.b0.9.ratio": 0.05, "momentum.gelu.frozen.ema.b0.9.grad_var": 4,
	} {
		if got, ok := r.Float(k); !ok || got != want {
			t.Errorf("%s = %v (set: %v), want %v", k, got, ok, want)
		}
	}
	if err := s.Record(r, "gelu.frozen"); err == nil {
		t.Error("recording the same keys twice: no error")
	}
}
