package experiment

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/report"
)

func TestWeakest(t *testing.T) {
	c, n, u := report.Confirmed, report.NotConfirmed, report.Unclear
	for _, tc := range []struct {
		in   []report.Verdict
		want report.Verdict
	}{{nil, c}, {[]report.Verdict{c, c}, c}, {[]report.Verdict{c, u, c}, u}, {[]report.Verdict{u, n}, n}, {[]report.Verdict{n, u}, n}} {
		if got := Weakest(tc.in...); got != tc.want {
			t.Errorf("Weakest(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRankByMedianPutsNaNLast(t *testing.T) {
	nan := math.NaN()
	gs := []*Group[string]{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	vals := map[string][]float64{"a": {nan, nan}, "b": {3, 5}, "c": {1, 2}, "d": {4, 4}} // medians NaN, 4, 1.5, 4
	r := RankByMedian(gs, func(g *Group[string]) []float64 { return vals[g.Name] }, 10)
	var names []string
	for _, x := range r {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, []string{"c", "b", "d", "a"}) || r[0].Median != 15 {
		t.Errorf("ranked %v (first median %v), want [c b d a] (ties in input order, NaN last) with 15", names, r[0].Median)
	}
}

func TestCompareNamed(t *testing.T) {
	v := CompareNamed("A", "B", []float64{1, 2, 3}, []float64{2, 3, 1}, 100)
	// a < b in pairs 1 and 2, a > b in pair 3; medians 2 and 2.
	if v.Lower != 2 || v.Pairs() != 3 || v.MA != 200 || v.MB != 200 || v.P != 0.5 {
		t.Errorf("got %+v, want 2 of 3 lower, medians 200 and 200, p = P(X ≥ 2 | n = 3) = 4/8", v)
	}
}

func TestAlongTheEpochs(t *testing.T) {
	if got := EvalSteps(2, 5, 2); !slices.Equal(got, []int{2, 4, 5, 6, 8, 10}) {
		t.Errorf("EvalSteps(2 epochs of 5, every 2) = %v", got)
	}
	steps := []int{5, 10, 15, 20, 25, 30, 35, 40}                             // 8 epochs of 5 steps
	if got := ThinSteps(steps, 5, 3); !slices.Equal(got, []int{15, 30, 40}) { // every 3rd epoch end and the last
		t.Errorf("ThinSteps = %v, want [15 30 40]", got)
	}
	if got := ThinSteps(steps, 5, 8); !slices.Equal(got, steps) {
		t.Errorf("ThinSteps with room for all = %v", got)
	}
	if got := SeedRange(7, 3); !slices.Equal(got, []uint64{7, 8, 9}) {
		t.Errorf("SeedRange(7, 3) = %v", got)
	}
	b := Band{Steps: []int{1, 3}, Median: []float64{0.5, 0.25}}
	if b.MedianAt(3) != 0.25 || !math.IsNaN(b.MedianAt(2)) {
		t.Errorf("MedianAt: %v at 3, %v at 2; want 0.25 and NaN", b.MedianAt(3), b.MedianAt(2))
	}
}

func TestTrailingAndMaxRise(t *testing.T) {
	v := []float64{4, 2, 0, 2, 6, 1}
	tr := Trailing(v, 2) // means of (4,2) (2,0) (0,2) (2,6) (6,1) at steps 2…6
	if !slices.Equal(tr.Steps, []int{2, 3, 4, 5, 6}) || !slices.Equal(tr.Median, []float64{3, 1, 1, 4, 3.5}) {
		t.Errorf("Trailing = %v %v", tr.Steps, tr.Median)
	}
	if rise, at := MaxRise(v, 2); rise != 3 || at != 5 { // from the low 1 up to 4 at step 5
		t.Errorf("MaxRise = %v at %d, want 3 at 5", rise, at)
	}
	if from := tr.From(4); !slices.Equal(from.Steps, []int{4, 5, 6}) || from.Median[0] != 1 {
		t.Errorf("From(4) = %v %v", from.Steps, from.Median)
	}
	w := AlongTheWay(Band{Steps: []int{0, 1, 2}, Median: []float64{9, 1, 3}}, Band{Steps: []int{0, 1, 2}, Median: []float64{0, 2, 2.5}})
	if w != (Along{Lower: 1, N: 2, Gap: -1, At: 1}) { // step 0 skipped; differences −1 and +0.5
		t.Errorf("AlongTheWay = %+v", w)
	}
	if m, se := MeanDiff([]float64{1, 2, 3, 4}, []float64{0, 0, 0, 0}, 2); m != 2.5 || se != 1 { // block means 1.5 and 3.5: sd √2, /√2
		t.Errorf("MeanDiff = %v ± %v, want 2.5 ± 1", m, se)
	}
}

func TestTrailingBand(t *testing.T) {
	// Trailing means over 2 steps: run 1 (4,2,0) → 3, 1 at steps 2, 3;
	// run 2 (0,2,4) → 1, 3; run 3 (2,2,2) → 2, 2. Per step the median is
	// 2 and the range 1–3.
	g := &Group[int]{Name: "a", Runs: []*Run[int]{
		{Vectors: map[string][]float64{"loss": {4, 2, 0}}},
		{Vectors: map[string][]float64{"loss": {0, 2, 4}}},
		{Vectors: map[string][]float64{"loss": {2, 2, 2}}},
	}}
	b, err := g.TrailingBand("loss", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Steps, []int{2, 3}) || !slices.Equal(b.Median, []float64{2, 2}) ||
		!slices.Equal(b.Min, []float64{1, 1}) || !slices.Equal(b.Max, []float64{3, 3}) {
		t.Errorf("TrailingBand = %+v, want steps 2, 3, median 2, range 1–3", b)
	}
	// A run that diverged after 2 steps (1, 2 → 1.5 at step 2) drops out
	// at step 3: step 2 has 3, 1, 1.5 (median 1.5), step 3 has 1, 3
	// (median 2); one that diverged at once has no value anywhere.
	g.Runs[2].Vectors["loss"] = []float64{1, 2}
	g.Runs = append(g.Runs, &Run[int]{Vectors: map[string][]float64{"loss": nil}})
	b, err = g.TrailingBand("loss", 2)
	if err != nil || !slices.Equal(b.Steps, []int{2, 3}) || !slices.Equal(b.Median, []float64{1.5, 2}) ||
		!slices.Equal(b.Min, []float64{1, 1}) || !slices.Equal(b.Max, []float64{3, 3}) {
		t.Errorf("with runs cut short: TrailingBand = %+v, %v, want steps 2, 3, medians 1.5, 2, range 1–3", b, err)
	}
	if _, err := (&Group[int]{Name: "a"}).TrailingBand("loss", 2); err == nil || !strings.Contains(err.Error(), `a: trailing band of "loss"`) {
		t.Errorf("a group without runs: error %v", err)
	}
}

func TestVersusMissing(t *testing.T) {
	nan := math.NaN()
	// gelu's seeds both diverged: its median is NaN, and no pair is left
	// for the sign test (N 0, p 1).
	v := CompareNamed("gelu", "relu", []float64{nan, nan}, []float64{2, 3}, 1)
	if m := v.Missing(); !slices.Equal(m, []string{"gelu"}) || v.N != 0 || v.P != 1 || v.MB != 2.5 {
		t.Errorf("gelu all diverged: missing %v, %d pairs, p %v, relu median %v; want [gelu], 0, 1, 2.5", m, v.N, v.P, v.MB)
	}
	if m := CompareNamed("gelu", "relu", []float64{1, nan}, []float64{2, 3}, 1).Missing(); m != nil {
		t.Errorf("one gelu seed left: missing %v, want none", m)
	}
}
