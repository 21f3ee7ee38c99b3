package experiment

import (
	"math"
	"strings"
	"testing"
)

// diffRun is a run with the vector "rows" and the metric "loss" evaluated
// at steps 0 and 1.
func diffRun(t *testing.T, seed uint64, rows []float64, loss0, loss1 float64) *Run[string] {
	c := NewCurve("loss")
	if err := c.Add(0, loss0); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(1, loss1); err != nil {
		t.Fatal(err)
	}
	return &Run[string]{Seed: seed, Curve: c, Vectors: map[string][]float64{"rows": rows}}
}

func TestDiffFrom(t *testing.T) {
	base := &Group[string]{Name: "relu", Runs: []*Run[string]{
		diffRun(t, 1, []float64{0, 0, 0, 0}, 5, 2),
		diffRun(t, 2, []float64{1, 1, 1, 1}, 5, 2),
	}}
	g := &Group[string]{Name: "gelu", Runs: []*Run[string]{
		diffRun(t, 1, []float64{1, 2, 3, 4}, 5, 1),
		diffRun(t, 2, []float64{2, 2, 2, 2}, 5, 3),
	}}
	d, err := DiffFrom(g, base, "rows", "loss", 2)
	if err != nil {
		t.Fatal(err)
	}
	// Seed 1: differences 1, 2, 3, 4; block means 1.5 and 3.5, so mean 2.5
	// and SE sd(1.5, 3.5)/√2 = √2/√2 = 1. Seed 2: all 1, SE 0. Over seeds:
	// mean 1.75, sd |2.5 − 1|/√2, SE sd/√2 = 0.75, z = 1.75/0.75 = 7/3.
	// Finals: gelu 1 < 2 at seed 1, 3 > 2 at seed 2: lower in 1 of 2, sign
	// test P(X ≥ 1 | n = 2) = 3/4. Along the way (step 1 only): medians
	// gelu 2, relu 2: not below.
	want := Diff{Name: "gelu", Seeds: []uint64{1, 2}, PerSeed: []float64{2.5, 1}, PerSeedSE: []float64{1, 0},
		Delta: 1.75, SE: 0.75, AbsZ: 7.0 / 3, Lower: 1, N: 2, P: 0.75, Along: Along{Lower: 0, N: 1, Gap: 0, At: 1}}
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if d.Name != want.Name || len(d.Seeds) != 2 || d.Seeds[1] != 2 || !close(d.PerSeed[0], 2.5) || !close(d.PerSeed[1], 1) ||
		!close(d.PerSeedSE[0], 1) || d.PerSeedSE[1] != 0 || !close(d.Delta, want.Delta) || !close(d.SE, want.SE) ||
		!close(d.AbsZ, want.AbsZ) || d.Lower != 1 || d.N != 2 || !close(d.P, 0.75) || d.Along.N != 1 || d.Along.Lower != 0 {
		t.Errorf("DiffFrom = %+v\nwant       %+v", d, want)
	}
	// One seed: the spread over seeds is unknown, the evaluation noise is the SE.
	one, err := DiffFrom(&Group[string]{Name: "gelu", Runs: g.Runs[:1]}, &Group[string]{Name: "relu", Runs: base.Runs[:1]}, "rows", "loss", 2)
	if err != nil || !close(one.Delta, 2.5) || !close(one.SE, 1) || !close(one.AbsZ, 2.5) {
		t.Errorf("one seed: %+v, %v; want Δ 2.5, SE 1, z 2.5", one, err)
	}
	// gelu's seed 2 diverged after its step-0 evaluation: no final model,
	// no rows. Seed 1 alone is differenced (as with one seed above), and
	// the sign test has one pair: 1 < 2, P(X ≥ 1 | n = 1) = 1/2.
	g.Runs[1] = &Run[string]{Seed: 2, Curve: NewCurve("loss"), Diverged: "loss is NaN", Steps: 0}
	if err := g.Runs[1].Curve.Add(0, 5); err != nil {
		t.Fatal(err)
	}
	div, err := DiffFrom(g, base, "rows", "loss", 2)
	if err != nil || len(div.Seeds) != 1 || div.Seeds[0] != 1 || !close(div.Delta, 2.5) || !close(div.SE, 1) || !close(div.AbsZ, 2.5) ||
		div.Lower != 1 || div.N != 1 || !close(div.P, 0.5) {
		t.Errorf("seed 2 diverged: %+v, %v; want seed 1 only: Δ 2.5, SE 1, z 2.5, lower in 1 of 1, p 0.5", div, err)
	}
	// Every seed of the base diverged: nothing to difference.
	for i, r := range base.Runs {
		base.Runs[i] = &Run[string]{Seed: r.Seed, Curve: r.Curve, Diverged: "loss is NaN"}
	}
	none, err := DiffFrom(g, base, "rows", "loss", 2)
	if err != nil || len(none.Seeds) != 0 || !math.IsNaN(none.Delta) || !math.IsNaN(none.SE) || !math.IsNaN(none.AbsZ) || none.N != 0 {
		t.Errorf("every base seed diverged: %+v, %v; want no seeds, Δ, SE and z NaN, N 0", none, err)
	}
}

func TestDiffFromErrors(t *testing.T) {
	a := diffRun(t, 1, []float64{1, 2}, 1, 1)
	b := diffRun(t, 2, []float64{1, 2}, 1, 1)
	short := diffRun(t, 1, []float64{1}, 1, 1)
	none := diffRun(t, 1, nil, 1, 1)
	group := func(name string, runs ...*Run[string]) *Group[string] { return &Group[string]{Name: name, Runs: runs} }
	for _, tc := range []struct {
		g, base *Group[string]
		want    string
	}{
		{group("x", a), group("y", a, b), "x has 1 runs, y 2: want the same number"},
		{group("x"), group("y"), "x has 0 runs, y 0: want the same number, at least one"},
		{group("x", a), group("y", b), "run 0 of x has seed 1, of y seed 2: want paired seeds"},
		{group("x", a), group("y", short), `seed 1: "rows" has 2 values in x, 1 in y`},
		{group("x", none), group("y", none), `seed 1: "rows" has 0 values in x, 0 in y: want the same non-zero number`},
	} {
		if _, err := DiffFrom(tc.g, tc.base, "rows", "loss", 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}
