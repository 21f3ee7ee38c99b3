package experiment

// The evaluation steps of an epoch-based run, and a table of median curves
// at some of them: how the settings compared along the way, not only at
// the end.

import (
	"math"
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// EvalSteps returns the steps at which train.Trainer evaluates a run of
// epochs epochs of perEpoch steps with EvalEvery evalEvery: every
// evalEvery-th step and every epoch's end.
func EvalSteps(epochs, perEpoch, evalEvery int) []int {
	var steps []int
	for s := 1; s <= epochs*perEpoch; s++ {
		if s%evalEvery == 0 || s%perEpoch == 0 {
			steps = append(steps, s)
		}
	}
	return steps
}

// ThinSteps returns steps (increasing evaluation steps of runs with
// perEpoch steps an epoch) for a table of at most about most rows: all of
// them when there are no more than most, else the ends of every k-th epoch
// (k the fewest that leaves most epochs or fewer) and the last step.
func ThinSteps(steps []int, perEpoch, most int) []int {
	if len(steps) <= most {
		return slices.Clone(steps)
	}
	last := steps[len(steps)-1]
	stride := max(1, (last/perEpoch+most-1)/most)
	var out []int
	for _, s := range steps {
		if (s%perEpoch == 0 && (s/perEpoch)%stride == 0) || s == last {
			out = append(out, s)
		}
	}
	return out
}

// MedianAt returns the band's median at step: NaN when no run was
// evaluated there (every seed diverged before it).
func (b Band) MedianAt(step int) float64 {
	if i, ok := slices.BinarySearch(b.Steps, step); ok {
		return b.Median[i]
	}
	return math.NaN()
}

// MedianTable tabulates the median over seeds of metric, times scale, for
// each group at each of steps: a row per step starting with x(step) (in
// the column headed xName), then a column per group headed by its entry of
// names.
func MedianTable[S any](xName string, x func(step int) float64, steps []int, groups []*Group[S], names []string, metric string, scale float64) report.TableData {
	t := report.TableData{Header: append([]string{xName}, names...)}
	bands := make([]Band, len(groups))
	for i, g := range groups {
		bands[i] = g.Band(metric)
	}
	for _, s := range steps {
		row := []any{x(s)}
		for _, b := range bands {
			row = append(row, scale*b.MedianAt(s))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// SeedRange returns the n seeds first, first+1, …: the runs of a setting.
func SeedRange(first uint64, n int) []uint64 {
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = first + uint64(i)
	}
	return seeds
}
