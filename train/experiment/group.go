package experiment

// Runs grouped by setting, and what they show over seeds: the median and
// range of a curve at every evaluation, each seed's final or mean value,
// and the best setting of a family (a learning rate chosen on validation).

import (
	"math"
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// Group is the runs of one setting, in seed order.
type Group[S any] struct {
	Setting S
	Name    string
	Runs    []*Run[S]
}

// Groups groups runs by setting name, in the order the names first appear
// (the order of Grid.Settings for a Grid's runs).
func Groups[S any](runs []*Run[S]) []*Group[S] {
	var gs []*Group[S]
	for _, r := range runs {
		i := slices.IndexFunc(gs, func(g *Group[S]) bool { return g.Name == r.Name })
		if i < 0 {
			gs = append(gs, &Group[S]{Setting: r.Setting, Name: r.Name})
			i = len(gs) - 1
		}
		gs[i].Runs = append(gs[i].Runs, r)
	}
	return gs
}

// Steps returns every step at which some run of the group was evaluated,
// in order: a diverged run stops early, the others go on.
func (g *Group[S]) Steps() []int {
	var steps []int
	for _, r := range g.Runs {
		steps = append(steps, r.Curve.Steps...)
	}
	slices.Sort(steps)
	return slices.Compact(steps)
}

// Curves returns each run's values of metric at Steps (one row per run),
// NaN where a run has none.
func (g *Group[S]) Curves(metric string) [][]float64 {
	steps := g.Steps()
	out := make([][]float64, len(g.Runs))
	for i, r := range g.Runs {
		k := slices.Index(r.Curve.Metrics, metric)
		out[i] = make([]float64, len(steps))
		for j, s := range steps {
			out[i][j] = math.NaN()
			if k >= 0 {
				out[i][j] = r.Curve.at(k, s)
			}
		}
	}
	return out
}

// Band is a metric over seeds at each evaluation step: the median and the
// range from the lowest to the highest seed, of the finite values (a
// diverged run drops out; NaN where no run has a value).
type Band struct {
	Steps            []int
	Median, Min, Max []float64
}

// Band returns the metric's band over the group's runs.
func (g *Group[S]) Band(metric string) Band {
	b := Band{Steps: g.Steps()}
	q, err := report.Quantiles(g.Curves(metric), 0, 0.5, 1)
	if err != nil { // no runs: cannot happen for a Group made by Groups
		return b
	}
	b.Min, b.Median, b.Max = q[0], q[1], q[2]
	return b
}

// Scale returns the band with every value multiplied by k (100 for
// percent).
func (b Band) Scale(k float64) Band {
	s := Band{Steps: b.Steps}
	for _, v := range []struct{ in, out *[]float64 }{{&b.Median, &s.Median}, {&b.Min, &s.Min}, {&b.Max, &s.Max}} {
		for _, x := range *v.in {
			*v.out = append(*v.out, k*x)
		}
	}
	return s
}

// Series returns the band as a plot line: the median, shaded from min to
// max (no shading when they coincide everywhere, as with one seed), at x
// = x(step), or at the step itself when x is nil.
func (b Band) Series(name string, x func(step int) float64) report.Series {
	s := report.Series{Name: name, Y: b.Median}
	for _, st := range b.Steps {
		if x != nil {
			s.X = append(s.X, x(st))
		} else {
			s.X = append(s.X, float64(st))
		}
	}
	if !slices.Equal(b.Min, b.Max) {
		s.Lo, s.Hi = b.Min, b.Max
	}
	return s
}

// Final returns each run's value of metric at its last evaluation, NaN
// for a run that diverged: it has no final value, and a median over the
// seeds that survived would flatter the setting.
func (g *Group[S]) Final(metric string) []float64 {
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		out[i] = math.NaN()
		if r.Diverged == "" {
			out[i] = r.Curve.Last(metric)
		}
	}
	return out
}

// First returns each run's value of metric at its first evaluation (the
// untrained model's, with train.Config.EvalAtStart), diverged or not: NaN
// for a run without one.
func (g *Group[S]) First(metric string) []float64 {
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		out[i] = r.Curve.First(metric)
	}
	return out
}

// Mean returns each run's mean of metric over its evaluations (NaN for a
// diverged run): with the training loss, the area under the training
// curve per evaluation, lower for a run that gets low sooner.
func (g *Group[S]) Mean(metric string) []float64 {
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		v := r.Curve.Metric(metric)
		out[i] = math.NaN()
		if r.Diverged != "" || len(v) == 0 {
			continue
		}
		out[i] = 0
		for _, x := range v {
			out[i] += x / float64(len(v))
		}
	}
	return out
}

// Value returns each run's Values[name] (NaN where it was not set).
func (g *Group[S]) Value(name string) []float64 {
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		v, ok := r.Values[name]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
}

// Diverged returns the number of runs that diverged.
func (g *Group[S]) Diverged() int {
	n := 0
	for _, r := range g.Runs {
		if r.Diverged != "" {
			n++
		}
	}
	return n
}

// Best chooses one group per family: among the groups whose settings give
// the same family(setting) (all learning rates of one optimizer and
// activation, say), the one with the fewest diverged runs, then the lowest
// median Final value of metrics[0], then of metrics[1], …; NaN counts as
// worst, and the first group wins a tie. It returns the chosen groups in
// the order of groups.
func Best[S any, K comparable](groups []*Group[S], family func(S) K, metrics ...string) []*Group[S] {
	key := func(g *Group[S]) []float64 {
		k := []float64{float64(g.Diverged())}
		for _, m := range metrics {
			v := Median(g.Final(m))
			if math.IsNaN(v) {
				v = math.Inf(1)
			}
			k = append(k, v)
		}
		return k
	}
	best := map[K]*Group[S]{}
	for _, g := range groups {
		f := family(g.Setting)
		if b, ok := best[f]; !ok || slices.Compare(key(g), key(b)) < 0 {
			best[f] = g
		}
	}
	var out []*Group[S]
	for _, g := range groups {
		if best[family(g.Setting)] == g {
			out = append(out, g)
		}
	}
	return out
}
