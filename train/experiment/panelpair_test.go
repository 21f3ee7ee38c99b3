package experiment

import (
	"slices"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestLossErrorPanels(t *testing.T) {
	// relu: one seed, losses 100, 10, 1 (a 100-fold span), errors 0.5, 0.25, 0.125.
	// gelu: one seed, losses 2, 2, 2, errors 0.75, 0.5, 0.25.
	a, b := lrAct{0.1, "relu"}, lrAct{0.01, "gelu"}
	gs := Groups([]*Run[lrAct]{run(a, 1, []float64{100, 10, 1}, []float64{0.5, 0.25, 0.125}), run(b, 1, []float64{2, 2, 2}, []float64{0.75, 0.5, 0.25})})
	loss, errs := LossErrorPanels(gs, "loss", "err", func(s int) float64 { return float64(s) / 4 }, []string{"ReLU", "GELU"},
		func(g *Group[lrAct]) string { return g.Setting.Act + " " + formatLR(g.Setting.LR) },
		func(g *Group[lrAct]) bool { return g.Setting.Act == "gelu" })
	ls, es := loss.Plot(report.PlotSpec{}), errs.Plot(report.PlotSpec{})
	if !ls.LogY || es.LogY {
		t.Errorf("log y: loss %v (span 100-fold), errors %v (span 6-fold), want true, false", ls.LogY, es.LogY)
	}
	want := map[string][2][]float64{"relu 0.1": {{100, 10, 1}, {50, 25, 12.5}}, "gelu 0.01": {{2, 2, 2}, {75, 50, 25}}}
	for i, s := range ls.Series {
		w, ok := want[s.Name]
		if !ok || es.Series[i].Name != s.Name {
			t.Fatalf("series %d named %q and %q, want one of relu 0.1, gelu 0.01", i, s.Name, es.Series[i].Name)
		}
		if !slices.Equal(s.Y, w[0]) || !slices.Equal(es.Series[i].Y, w[1]) {
			t.Errorf("%s: loss %v, errors %v, want %v, %v (percent)", s.Name, s.Y, es.Series[i].Y, w[0], w[1])
		}
		if !slices.Equal(s.X, []float64{0.25, 0.5, 0.75}) || s.Dashed != (s.Name == "gelu 0.01") || es.Series[i].Dashed != s.Dashed {
			t.Errorf("%s: x %v dashed %v/%v, want [0.25 0.5 0.75], dashed only for gelu", s.Name, s.X, s.Dashed, es.Series[i].Dashed)
		}
	}
	if tab := errs.Table("epoch", []int{3}); len(tab.Header) != 3 || tab.Header[1] != "ReLU" || len(tab.Rows) != 1 {
		t.Errorf("table %v, want header [epoch ReLU GELU] and one row", tab)
	}
}
