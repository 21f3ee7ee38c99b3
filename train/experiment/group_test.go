package experiment

import (
	"math"
	"slices"
	"testing"
)

type lrAct struct {
	LR  float64
	Act string
}

// run makes a finished run evaluated at steps 1, 2, 3, … with the given
// values of the metrics loss and err; a NaN in loss ends it as diverged.
func run(s lrAct, seed uint64, loss, errs []float64) *Run[lrAct] {
	r := &Run[lrAct]{Setting: s, Seed: seed, Name: s.Act + "/" + formatLR(s.LR), Curve: NewCurve("loss", "err"), Values: map[string]float64{"seed": float64(seed)}}
	for i := range loss {
		if math.IsNaN(loss[i]) {
			r.Diverged = "NaN loss"
			break
		}
		r.Curve.Add(i+1, loss[i], errs[i])
	}
	return r
}

func formatLR(lr float64) string {
	return map[float64]string{0.01: "0.01", 0.03: "0.03", 0.1: "0.1"}[lr]
}

func TestGroupsBandsAndFinals(t *testing.T) {
	nan := math.NaN()
	a, b := lrAct{0.1, "relu"}, lrAct{0.1, "gelu"}
	runs := []*Run[lrAct]{
		run(a, 1, []float64{4, 3, 2}, []float64{0.5, 0.4, 0.3}),
		run(b, 1, []float64{5, 2, 1}, []float64{0.6, 0.3, 0.2}),
		run(a, 2, []float64{6, 5, 4}, []float64{0.7, 0.6, 0.5}),
		run(b, 2, []float64{3, nan}, []float64{0.4, nan}), // diverged after step 1
		run(a, 3, []float64{2, 1, 0}, []float64{0.3, 0.2, 0.1}),
		run(b, 3, []float64{4, 3, 2}, []float64{0.5, 0.4, 0.3}),
	}
	gs := Groups(runs)
	if len(gs) != 2 || gs[0].Setting != a || gs[1].Setting != b || len(gs[0].Runs) != 3 || gs[1].Runs[1].Seed != 2 {
		t.Fatalf("groups %+v", gs)
	}
	// relu at each step: {4, 6, 2}, {3, 5, 1}, {2, 4, 0}.
	band := gs[0].Band("loss")
	if !slices.Equal(band.Steps, []int{1, 2, 3}) || !slices.Equal(band.Median, []float64{4, 3, 2}) ||
		!slices.Equal(band.Min, []float64{2, 1, 0}) || !slices.Equal(band.Max, []float64{6, 5, 4}) {
		t.Errorf("relu band %+v", band)
	}
	// gelu: the diverged seed drops out after step 1: {5, 3, 4}, {2, 3}, {1, 2}.
	band = gs[1].Band("loss")
	if !slices.Equal(band.Median, []float64{4, 2.5, 1.5}) || !slices.Equal(band.Min, []float64{3, 2, 1}) || !slices.Equal(band.Max, []float64{5, 3, 2}) {
		t.Errorf("gelu band %+v", band)
	}
	if s := band.Scale(10).Series("GELU", func(step int) float64 { return float64(step) / 2 }); !slices.Equal(s.X, []float64{0.5, 1, 1.5}) ||
		!slices.Equal(s.Y, []float64{40, 25, 15}) || !slices.Equal(s.Lo, []float64{30, 20, 10}) || !slices.Equal(s.Hi, []float64{50, 30, 20}) {
		t.Errorf("series %+v", s)
	}
	one := &Group[lrAct]{Runs: runs[:1]}
	if s := one.Band("err").Series("one seed", nil); s.Lo != nil || !slices.Equal(s.X, []float64{1, 2, 3}) || !slices.Equal(s.Y, []float64{0.5, 0.4, 0.3}) {
		t.Errorf("one seed: %+v, want the curve without a band", s)
	}
	// A diverged run has no final value and no mean.
	if f := gs[1].Final("err"); f[0] != 0.2 || !math.IsNaN(f[1]) || f[2] != 0.3 {
		t.Errorf("final %v", f)
	}
	if m := gs[0].Mean("loss"); math.Abs(m[0]-3) > 1e-15 || math.Abs(m[1]-5) > 1e-15 || math.Abs(m[2]-1) > 1e-15 {
		t.Errorf("mean %v", m)
	}
	if m := gs[1].Mean("loss"); !math.IsNaN(m[1]) {
		t.Errorf("mean of a diverged run %v", m[1])
	}
	if d := gs[1].Diverged(); d != 1 {
		t.Errorf("%d diverged", d)
	}
	if v := gs[1].Value("seed"); !slices.Equal(v, []float64{1, 2, 3}) || !math.IsNaN(gs[1].Value("none")[0]) {
		t.Errorf("values %v", v)
	}
	if c := gs[0].Curves("none"); len(c) != 3 || !math.IsNaN(c[0][0]) {
		t.Errorf("curves of an unknown metric %v", c)
	}
}

// Best chooses by the fewest diverged runs first: 0.1 has the lowest median
// among its surviving seeds but diverged once. A tie goes to the first.
func TestBestLearningRate(t *testing.T) {
	nan := math.NaN()
	errs := map[float64][]float64{0.01: {0.08, 0.09}, 0.03: {0.06, 0.07}, 0.1: {0.05, nan}}
	var runs []*Run[lrAct]
	for _, act := range []string{"elu", "relu"} {
		for _, lr := range []float64{0.01, 0.03, 0.1} {
			for s, e := range errs[lr] {
				if act == "relu" {
					e = 0.05 // every rate ties
				}
				runs = append(runs, run(lrAct{lr, act}, uint64(s), []float64{e}, []float64{e}))
			}
		}
	}
	best := Best(Groups(runs), func(s lrAct) string { return s.Act }, "err", "loss")
	if len(best) != 2 || best[0].Setting != (lrAct{0.03, "elu"}) || best[1].Setting != (lrAct{0.01, "relu"}) {
		for _, g := range best {
			t.Logf("chosen %+v", g.Setting)
		}
		t.Errorf("%d chosen, want elu at 0.03 and relu at 0.01", len(best))
	}
}

func TestCurve(t *testing.T) {
	c := NewCurve("a", "b")
	if err := c.Add(1, 1); err == nil {
		t.Error("one value for two metrics accepted")
	}
	if err := c.Add(2, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(2, 3, 4); err == nil {
		t.Error("a step repeated")
	}
	c.Add(5, 3, 4)
	if !slices.Equal(c.Metric("b"), []float64{2, 4}) || c.Last("a") != 3 || c.Metric("c") != nil || !math.IsNaN(c.Last("c")) {
		t.Errorf("curve %+v", c)
	}
	if c.First("a") != 1 || c.First("b") != 2 || !math.IsNaN(c.First("c")) {
		t.Errorf("First: a %v b %v c %v, want 1, 2, NaN", c.First("a"), c.First("b"), c.First("c"))
	}
	// A group's First keeps a diverged run's first value (its Final is NaN)
	// and is NaN for a run with no evaluation.
	empty := NewCurve("a", "b")
	g := &Group[int]{Runs: []*Run[int]{{Curve: c, Diverged: "NaN loss"}, {Curve: empty}}}
	if f := g.First("b"); f[0] != 2 || !math.IsNaN(f[1]) {
		t.Errorf("Group.First: %v, want [2 NaN]", f)
	}
}
