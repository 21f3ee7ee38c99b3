package experiment

// Paired comparisons as a report states them: the summary keys of a sign
// test, the medians of both sides, and one verdict for a claim that rests
// on several comparisons.

import (
	"cmp"
	"math"
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// Pairs is the sign test's n: the pairs that differ (Lower + Higher).
func (p Paired) Pairs() int { return p.Lower + p.Higher }

// Set records the comparison as key+".lower_seeds", ".pairs" (Pairs),
// ".p_value", ".mean_diff" and ".mean_diff_se".
func (p Paired) Set(r *report.Report, key string) {
	r.Set(key+".lower_seeds", p.Lower)
	r.Set(key+".pairs", p.Pairs())
	r.Set(key+".p_value", p.P)
	r.Set(key+".mean_diff", p.Mean)
	r.Set(key+".mean_diff_se", p.SE)
}

// Versus is a paired comparison of two settings, A and B, on one
// quantity, with what a report template shows of it: the two names, the
// medians over seeds and the sign test (Compare(a, b)).
type Versus struct {
	A, B   string  // the settings' names
	MA, MB float64 // the medians of a and b over seeds, times the scale given
	Paired
}

// CompareNamed compares the values a of the setting named nameA with b of
// nameB, seed by seed (Compare); the medians are multiplied by scale (100
// for percent).
func CompareNamed(nameA, nameB string, a, b []float64, scale float64) Versus {
	return Versus{A: nameA, B: nameB, MA: scale * Median(a), MB: scale * Median(b), Paired: Compare(a, b)}
}

// Missing returns the names of the sides, A then B, whose median is NaN:
// no finite value, every run of the setting diverged. A claim that
// compares the medians says so instead of comparing NaN.
func (v Versus) Missing() []string {
	var out []string
	if math.IsNaN(v.MA) {
		out = append(out, v.A)
	}
	if math.IsNaN(v.MB) {
		out = append(out, v.B)
	}
	return out
}

// Weakest returns the weakest of verdicts, for a claim that needs every
// comparison to hold: NotConfirmed if any is, else Unclear if any is,
// else Confirmed (also for none).
func Weakest(verdicts ...report.Verdict) report.Verdict {
	rank := map[report.Verdict]int{report.NotConfirmed: 0, report.Unclear: 1, report.Confirmed: 2}
	w := report.Confirmed
	for _, v := range verdicts {
		if rank[v] < rank[w] {
			w = v
		}
	}
	return w
}

// Ranked is a group with the median of the quantity it was ranked by.
type Ranked[S any] struct {
	*Group[S]
	Median float64
}

// RankByMedian returns the groups ordered by the median over seeds of
// value(g), times scale, ascending: the best first for a loss or an error.
// A group whose median is NaN (every run diverged) comes last; ties keep
// the order of groups.
func RankByMedian[S any](groups []*Group[S], value func(*Group[S]) []float64, scale float64) []Ranked[S] {
	out := make([]Ranked[S], len(groups))
	for i, g := range groups {
		out[i] = Ranked[S]{g, scale * Median(value(g))}
	}
	slices.SortStableFunc(out, func(x, y Ranked[S]) int {
		if nx, ny := math.IsNaN(x.Median), math.IsNaN(y.Median); nx || ny {
			return cmp.Compare(b2i(nx), b2i(ny))
		}
		return cmp.Compare(x.Median, y.Median)
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
