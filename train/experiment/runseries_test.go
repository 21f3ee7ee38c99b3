package experiment

import (
	"math"
	"slices"
	"testing"
)

func TestSelectAndRunSeries(t *testing.T) {
	a := &Run[string]{Setting: "a", Name: "a", Curve: NewCurve("loss")}
	b := &Run[string]{Setting: "b", Name: "b", Curve: NewCurve("loss")}
	for i, v := range []float64{3, 2, 1} {
		a.Curve.Add(10*i, v)
	}
	b.Curve.Add(0, 5)
	b.Curve.Add(10, math.NaN()) // diverged at step 10
	if got := Select([]*Run[string]{a, b}, func(s string) bool { return s == "b" }); len(got) != 1 || got[0] != b {
		t.Errorf("Select: %v, want [b]", got)
	}
	s := RunSeries([]*Run[string]{a, b}, "loss", func(r *Run[string]) string { return "run " + r.Name })
	if len(s) != 2 || s[0].Name != "run a" || s[1].Name != "run b" {
		t.Fatalf("RunSeries: %+v", s)
	}
	if !slices.Equal(s[0].X, []float64{0, 10, 20}) || !slices.Equal(s[0].Y, []float64{3, 2, 1}) || s[0].Lo != nil || s[0].Hi != nil {
		t.Errorf("run a: X %v Y %v Lo %v Hi %v, want steps 0, 10, 20, values 3, 2, 1, no band", s[0].X, s[0].Y, s[0].Lo, s[0].Hi)
	}
	if !slices.Equal(s[1].X, []float64{0, 10}) || s[1].Y[0] != 5 || !math.IsNaN(s[1].Y[1]) {
		t.Errorf("run b: X %v Y %v, want 5 then NaN at steps 0, 10", s[1].X, s[1].Y)
	}
}
