package main

// Runs grouped by (optimizer, learning rate, activation) and summarized
// across seeds: median and min–max per evaluation, per-seed final values,
// and the learning rate chosen on the validation set.

import (
	"math"
	"slices"

	"github.com/geluproject/gelu/ops"
	"github.com/geluproject/gelu/train/report"
)

// metric is a column of point.
type metric struct {
	Key string
	Get func(point) float64
}

var metrics = []metric{
	{"train_loss", func(p point) float64 { return p.TrainLoss }},
	{"train_loss_nodrop", func(p point) float64 { return p.TrainLossNoDrop }},
	{"val_loss", func(p point) float64 { return p.ValLoss }},
	{"val_error", func(p point) float64 { return p.ValErr }},
	{"test_loss", func(p point) float64 { return p.TestLoss }},
	{"test_error", func(p point) float64 { return p.TestErr }},
}

// group is one (optimizer, learning rate, activation) over all seeds.
type group struct {
	Opt      string
	LR       float64
	Act      ops.Activation
	Runs     []*runResult // in seed order
	Selected bool         // this learning rate is the one reported for (Opt, Act)
	// Band[metric] holds the min, median and max over seeds at each
	// evaluation; diverged runs drop out where they are NaN.
	Band map[string][3][]float64
}

// groupRuns groups the runs by optimizer, then activation, then learning
// rate, in the order the flags list them.
func groupRuns(c config, runs []*runResult) ([]*group, error) {
	var gs []*group
	for _, o := range c.Opts {
		for _, a := range c.Acts {
			for _, lr := range c.lrs(o) {
				g := &group{Opt: o, LR: lr, Act: a, Band: map[string][3][]float64{}}
				for _, r := range runs {
					if r.Key.Opt == o && r.Key.LR == lr && r.Key.Act == a {
						g.Runs = append(g.Runs, r)
					}
				}
				gs = append(gs, g)
			}
		}
	}
	for _, g := range gs {
		for _, m := range metrics {
			series := make([][]float64, len(g.Runs))
			for i, r := range g.Runs {
				for _, p := range r.Points {
					series[i] = append(series[i], m.Get(p))
				}
			}
			q, err := report.Quantiles(series, 0, 0.5, 1)
			if err != nil {
				return nil, err
			}
			g.Band[m.Key] = [3][]float64{q[0], q[1], q[2]}
		}
	}
	selectLR(gs)
	return gs, nil
}

// selectLR marks, for each optimizer and activation, the learning rate
// with the lowest median final validation error (ties: validation loss),
// the paper's protocol, among those with the fewest diverged runs (a
// median over the seeds that survived would flatter a rate that diverges);
// with one learning rate there is nothing to choose.
func selectLR(gs []*group) {
	for _, g := range gs {
		best := g
		for _, h := range gs {
			if h.Opt == g.Opt && h.Act == g.Act && better(h, best) {
				best = h
			}
		}
		g.Selected = best == g
	}
}

func better(h, g *group) bool {
	key := func(x *group) [3]float64 {
		e, _, _ := medianOf(x.final("val_error"))
		l, _, _ := medianOf(x.final("val_loss"))
		return [3]float64{float64(x.diverged()), nanInf(e), nanInf(l)}
	}
	kh, kg := key(h), key(g)
	for i := range kh {
		if kh[i] != kg[i] {
			return kh[i] < kg[i]
		}
	}
	return false
}

func nanInf(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// final returns each seed's value of the metric at the last evaluation.
func (g *group) final(key string) []float64 {
	m := metrics[slices.IndexFunc(metrics, func(m metric) bool { return m.Key == key })]
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		out[i] = m.Get(r.Points[len(r.Points)-1])
	}
	return out
}

// meanTrainLoss returns each seed's training loss averaged over all
// evaluations: the area under its training curve per evaluation interval,
// which is lower for a run that gets low sooner. NaN for a diverged run.
func (g *group) meanTrainLoss(key string) []float64 {
	m := metrics[slices.IndexFunc(metrics, func(m metric) bool { return m.Key == key })]
	out := make([]float64, len(g.Runs))
	for i, r := range g.Runs {
		for _, p := range r.Points {
			out[i] += m.Get(p) / float64(len(r.Points))
		}
	}
	return out
}

func (g *group) diverged() int {
	n := 0
	for _, r := range g.Runs {
		if r.Diverged != "" {
			n++
		}
	}
	return n
}

// medianOf returns the median, min and max of the finite values (NaN if
// there are none).
func medianOf(v []float64) (med, lo, hi float64) {
	rows := make([][]float64, len(v))
	for i, x := range v {
		rows[i] = []float64{x}
	}
	q, err := report.Quantiles(rows, 0.5, 0, 1)
	if err != nil {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return q[0][0], q[1][0], q[2][0]
}

// selected returns the reported group of each optimizer and activation.
func selected(gs []*group) []*group {
	var out []*group
	for _, g := range gs {
		if g.Selected {
			out = append(out, g)
		}
	}
	return out
}

func find(gs []*group, opt string, act ops.Activation) *group {
	for _, g := range gs {
		if g.Selected && g.Opt == opt && g.Act == act {
			return g
		}
	}
	return nil
}
