package experiment

import (
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestComparisons(t *testing.T) {
	// Three seeds; gelu's loss is lower than relu's in every one.
	relu := &Group[string]{Setting: "relu", Name: "relu", Runs: []*Run[string]{famRun(t, 1, 0.5, ""), famRun(t, 2, 0.6, ""), famRun(t, 3, 0.7, "")}}
	gelu := &Group[string]{Setting: "gelu", Name: "gelu", Runs: []*Run[string]{famRun(t, 1, 0.4, ""), famRun(t, 2, 0.5, ""), famRun(t, 3, 0.6, "")}}
	r, err := report.New(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	c := Comparisons[string]{Report: r, Groups: []*Group[string]{relu, gelu},
		Values: map[string]func(*Group[string]) []float64{"loss": func(g *Group[string]) []float64 { return g.Final("loss") }}}
	is := func(name string) func(string) bool { return func(s string) bool { return s == name } }
	v, ok := c.Compare("loss", is("gelu"), is("relu"), "GELU", "ReLU", 100, "cmp.gelu_vs_relu")
	if !ok || v.A != "GELU" || v.B != "ReLU" || v.MA != 50 || v.MB != 60 {
		t.Errorf("Compare: %+v (%v), want GELU 50 vs ReLU 60 (medians 0.5, 0.6 times 100)", v, ok)
	}
	if v.Paired != Compare([]float64{0.4, 0.5, 0.6}, []float64{0.5, 0.6, 0.7}) {
		t.Errorf("sign test %+v, want Compare's of the per-seed values", v.Paired)
	}
	if _, recorded := r.Float("cmp.gelu_vs_relu.p_value"); !recorded {
		t.Error("nothing recorded under cmp.gelu_vs_relu")
	}
	if _, ok := c.Compare("loss", is("gelu"), is("elu"), "GELU", "ELU", 1, "cmp.gelu_vs_elu"); ok {
		t.Error("a missing group: ok")
	}
	if _, recorded := r.Float("cmp.gelu_vs_elu.p_value"); recorded {
		t.Error("a comparison with a missing group was recorded")
	}
}
