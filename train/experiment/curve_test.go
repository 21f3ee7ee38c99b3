package experiment

import (
	"slices"
	"testing"
)

// Before keeps the points before its step, as copies.
func TestCurveBefore(t *testing.T) {
	c := NewCurve("loss", "acc")
	for _, p := range [][3]float64{{0, 2, 0.1}, {10, 1.5, 0.5}, {20, 1, 0.7}} {
		if err := c.Add(int(p[0]), p[1], p[2]); err != nil {
			t.Fatal(err)
		}
	}
	for at, want := range map[int][]int{0: {}, 1: {0}, 10: {0}, 15: {0, 10}, 21: {0, 10, 20}} {
		cut := c.Before(at)
		if !slices.Equal(cut.Steps, want) || len(cut.Metric("loss")) != len(want) || len(cut.Metric("acc")) != len(want) {
			t.Errorf("Before(%d): steps %v, loss %v, acc %v; want steps %v", at, cut.Steps, cut.Metric("loss"), cut.Metric("acc"), want)
		}
	}
	cut := c.Before(15)
	if cut.Last("acc") != 0.5 || cut.Last("loss") != 1.5 {
		t.Errorf("Before(15): last acc %v, loss %v; want 0.5, 1.5", cut.Last("acc"), cut.Last("loss"))
	}
	cut.Values[0][0], cut.Steps[0] = 99, 99
	if c.First("loss") != 2 || c.Steps[0] != 0 {
		t.Errorf("changing the cut changed the curve: %v %v", c.Steps, c.Metric("loss"))
	}
}
