package experiment

import (
	"math"
	"slices"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestPanel(t *testing.T) {
	// Two settings, two seeds each, errors at steps 1, 2, 3.
	a, b := lrAct{0.1, "relu"}, lrAct{0.1, "gelu"}
	gs := Groups([]*Run[lrAct]{
		run(a, 1, []float64{1, 1, 1}, []float64{0.5, 0.4, 0.3}),
		run(b, 1, []float64{1, 1, 1}, []float64{0.02, 0.01, 0.001}),
		run(a, 2, []float64{1, 1, 1}, []float64{0.7, 0.6, 0.5}),
		run(b, 2, []float64{1, 1, 1}, []float64{0.04, 0.03, 0.003}),
	})
	p := Panel[lrAct]{Groups: gs, Metric: "err", Scale: 100, X: func(s int) float64 { return float64(s) / 2 },
		Lines: []string{"ReLU (lr 0.1)", "GELU (lr 0.1)"}, Titles: []string{"ReLU", "GELU"},
		Dashed: func(g *Group[lrAct]) bool { return g.Setting.Act == "gelu" }, LogAbove: 30}
	spec := p.Plot(report.PlotSpec{Title: "Error", DPI: 30})
	if spec.Title != "Error" || spec.DPI != 30 || len(spec.Series) != 2 {
		t.Fatalf("spec %+v", spec)
	}
	relu, gelu := spec.Series[0], spec.Series[1]
	near := func(got, want []float64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9*math.Abs(want[i]) {
				return false
			}
		}
		return true
	}
	// Medians of two seeds: their means, in percent; shaded from min to max.
	if relu.Name != "ReLU (lr 0.1)" || relu.Dashed || !near(relu.Y, []float64{60, 50, 40}) || !near(relu.Lo, []float64{50, 40, 30}) ||
		!near(relu.Hi, []float64{70, 60, 50}) || !slices.Equal(relu.X, []float64{0.5, 1, 1.5}) {
		t.Errorf("ReLU line %+v", relu)
	}
	if !gelu.Dashed || !near(gelu.Y, []float64{3, 2, 0.2}) {
		t.Errorf("GELU line %+v", gelu)
	}
	// 70 down to 0.1: a range of 700 > 30, so a log axis.
	if !spec.LogY {
		t.Error("values from 0.1 to 70 on a linear axis")
	}
	if p.LogAbove = 0; p.Plot(report.PlotSpec{}).LogY {
		t.Error("LogAbove 0 set a log axis")
	}
	tab := p.Table("epoch", []int{1, 3})
	if !slices.Equal(tab.Header, []string{"epoch", "ReLU", "GELU"}) || len(tab.Rows) != 2 {
		t.Fatalf("table %+v", tab)
	}
	if r := tab.Rows[1]; r[0] != 1.5 || math.Abs(r[1].(float64)-40) > 1e-9 || math.Abs(r[2].(float64)-0.2) > 1e-9 {
		t.Errorf("row at step 3: %v, want [1.5 40 0.2]", r)
	}
	// Without Titles, X and Scale: the legend names, the step, the values.
	q := Panel[lrAct]{Groups: gs[:1], Metric: "err", Lines: []string{"relu"}}
	if tab := q.Table("step", []int{2}); tab.Header[1] != "relu" || tab.Rows[0][0] != 2.0 || math.Abs(tab.Rows[0][1].(float64)-0.5) > 1e-12 {
		t.Errorf("plain table %+v", tab)
	}
	if s := q.Plot(report.PlotSpec{}).Series[0]; !slices.Equal(s.X, []float64{1, 2, 3}) || math.Abs(s.Y[0]-0.6) > 1e-12 {
		t.Errorf("plain series %+v", s)
	}
}

// A group whose every run diverged before its first evaluation has no
// point: Plot leaves its line out (a series without points cannot be
// drawn) and Unplotted names it.
func TestPanelLeavesOutGroupsWithoutPoints(t *testing.T) {
	nan := math.NaN()
	a, b := lrAct{0.1, "relu"}, lrAct{0.1, "gelu"}
	gs := Groups([]*Run[lrAct]{
		run(a, 1, []float64{1, 1}, []float64{0.5, 0.4}),
		run(b, 1, []float64{nan}, []float64{nan}),
		run(b, 2, []float64{nan}, []float64{nan}),
	})
	p := Panel[lrAct]{Groups: gs, Metric: "err", Lines: []string{"ReLU", "GELU"}}
	spec := p.Plot(report.PlotSpec{})
	if len(spec.Series) != 1 || spec.Series[0].Name != "ReLU" {
		t.Errorf("series %+v, want ReLU's alone", spec.Series)
	}
	if got := p.Unplotted(); !slices.Equal(got, []string{"GELU"}) {
		t.Errorf("Unplotted() = %v, want [GELU]", got)
	}
	if got := (Panel[lrAct]{Groups: gs[:1], Metric: "err", Lines: []string{"ReLU"}}).Unplotted(); got != nil {
		t.Errorf("Unplotted() = %v with every group drawn, want none", got)
	}
}
