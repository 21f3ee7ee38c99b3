package experiment

// A per-step loss smoothed by a trailing mean, and what it shows: the
// largest rise above its running minimum (an instability), a band over
// seeds of such curves, and two median curves compared along the way.

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/train/report"
)

// Trailing returns the mean of the last k values (fewer at the start:
// from the k-th value on; all of them when there are fewer than k) at
// each step: steps are 1-based, so the band starts at step min(k, len).
// Min and Max equal Median.
func Trailing(values []float64, k int) Band {
	var b Band
	k = min(k, len(values))
	for i := k - 1; i < len(values); i++ {
		var sum float64
		for _, v := range values[i+1-k : i+1] {
			sum += v
		}
		b.Steps, b.Median = append(b.Steps, i+1), append(b.Median, sum/float64(k))
	}
	b.Min, b.Max = b.Median, b.Median
	return b
}

// MaxRise returns the largest rise of the trailing mean of values (over k
// steps) above its running minimum, and the step where it peaked: 0, 0
// for a curve that never rises.
func MaxRise(values []float64, k int) (rise float64, at int) {
	t, low := Trailing(values, k), math.Inf(1)
	for i, m := range t.Median {
		if low = math.Min(low, m); m-low > rise {
			rise, at = m-low, t.Steps[i]
		}
	}
	return rise, at
}

// BandOver returns the median and range over runs of curves ys (one per
// run, each with a value at every one of steps).
func BandOver(steps []int, ys [][]float64) (Band, error) {
	q, err := report.Quantiles(ys, 0, 0.5, 1)
	if err != nil {
		return Band{}, err
	}
	return Band{Steps: steps, Min: q[0], Median: q[1], Max: q[2]}, nil
}

// From returns the part of the band from the first step at or after step.
func (b Band) From(step int) Band {
	for i, s := range b.Steps {
		if s >= step {
			return Band{Steps: b.Steps[i:], Median: b.Median[i:], Min: b.Min[i:], Max: b.Max[i:]}
		}
	}
	return b
}

// Along compares the median curve of a with that of b before the end, at
// the steps both have (step 0, the initial weights, excluded): a
// difference in speed of learning need not survive to the end.
type Along struct {
	Lower, N int     // evaluations where a's median is below b's, of N
	Gap      float64 // the largest difference a − b, at step At
	At       int
}

// AlongTheWay compares the bands a and b step by step (Along).
func AlongTheWay(a, b Band) (w Along) {
	for i, step := range a.Steps {
		if step == 0 || i >= len(b.Steps) || b.Steps[i] != step {
			continue
		}
		d := a.Median[i] - b.Median[i]
		w.N++
		if d < 0 {
			w.Lower++
		}
		if math.Abs(d) > math.Abs(w.Gap) {
			w.Gap, w.At = d, step
		}
	}
	return w
}

// MeanDiff returns the mean of a[i] − b[i] over paired rows (losses of the
// same examples under two models) and its batch-means standard error over
// blocks contiguous blocks (BlockSE), which allows for neighbouring rows
// being correlated.
func MeanDiff(a, b []float64, blocks int) (mean, se float64) {
	d := make([]float64, len(a))
	for j := range d {
		d[j] = a[j] - b[j]
	}
	return Summarize(d).Mean, BlockSE(d, blocks)
}

// TrailingBand returns the band over the group's runs of the trailing mean
// (Trailing, over k steps) of each run's Vectors[vector], a per-step
// training loss say. A run that diverged has a shorter vector: the band
// has the steps of the longest, and a run drops out of it where its
// values end (NaN where no run has a value).
func (g *Group[S]) TrailingBand(vector string, k int) (Band, error) {
	var steps []int
	var ts []Band
	for _, r := range g.Runs {
		t := Trailing(r.Vectors[vector], k)
		if len(t.Steps) > len(steps) {
			steps = t.Steps
		}
		ts = append(ts, t)
	}
	var ys [][]float64
	for _, t := range ts {
		y := make([]float64, len(steps))
		for i, s := range steps {
			y[i] = math.NaN()
			if i < len(t.Steps) && t.Steps[i] == s {
				y[i] = t.Median[i]
			}
		}
		ys = append(ys, y)
	}
	b, err := BandOver(steps, ys)
	if err != nil {
		return Band{}, fmt.Errorf("experiment: %s: trailing band of %q: %w", g.Name, vector, err)
	}
	return b, nil
}
