package experiment

// One setting against a base setting on the same evaluation examples, seed
// by seed: the per-example differences give each seed's difference with
// its evaluation noise, the seeds give the spread between trainings.

import (
	"fmt"
	"math"
)

// Diff is a group's difference from a base group (DiffFrom).
type Diff struct {
	Name      string    // the group's name
	Seeds     []uint64  // the paired seeds, in the groups' order
	PerSeed   []float64 // per seed: mean over the examples of the group's value minus the base's
	PerSeedSE []float64 // per seed: its batch-means standard error (MeanDiff)
	// Delta is the mean of PerSeed over the seeds and SE its standard
	// error over the seeds; with one seed, that seed's PerSeedSE.
	Delta, SE float64
	AbsZ      float64 // |Delta/SE|: two or more is a clear difference
	Lower, N  int     // seeds where the group's final metric is lower than the base's, of N compared
	P         float64 // one-sided sign test that the group is lower (Compare)
	Along     Along   // how often the group's median curve of the metric was below the base's
}

// DiffFrom compares g with base. Per seed, it differences the runs'
// Vectors[vector] (every validation example's loss under the final model,
// say) on the same examples (MeanDiff over blocks blocks); over the seeds,
// it sign-tests the final values of metric (Compare) and compares the
// median curves of metric (AlongTheWay). The runs are paired by position:
// they must have the same seeds and, where neither diverged, vectors of
// the same non-zero length. A seed where either run diverged has no final
// model to difference: it is left out of Seeds and PerSeed (and of the
// sign test, whose values are NaN for it), and with no seed left Delta,
// SE and AbsZ are NaN.
func DiffFrom[S any](g, base *Group[S], vector, metric string, blocks int) (Diff, error) {
	d := Diff{Name: g.Name}
	if len(g.Runs) != len(base.Runs) || len(g.Runs) == 0 {
		return d, fmt.Errorf("experiment.DiffFrom: %s has %d runs, %s %d: want the same number, at least one",
			g.Name, len(g.Runs), base.Name, len(base.Runs))
	}
	for i, r := range g.Runs {
		a, b := r.Vectors[vector], base.Runs[i].Vectors[vector]
		switch {
		case r.Seed != base.Runs[i].Seed:
			return d, fmt.Errorf("experiment.DiffFrom: run %d of %s has seed %d, of %s seed %d: want paired seeds",
				i, g.Name, r.Seed, base.Name, base.Runs[i].Seed)
		case r.Diverged != "" || base.Runs[i].Diverged != "":
			continue
		case len(a) != len(b) || len(a) == 0:
			return d, fmt.Errorf("experiment.DiffFrom: seed %d: %q has %d values in %s, %d in %s: want the same non-zero number",
				r.Seed, vector, len(a), g.Name, len(b), base.Name)
		}
		delta, se := MeanDiff(a, b, blocks)
		d.Seeds = append(d.Seeds, r.Seed)
		d.PerSeed, d.PerSeedSE = append(d.PerSeed, delta), append(d.PerSeedSE, se)
	}
	s, p := Summarize(d.PerSeed), Compare(g.Final(metric), base.Final(metric))
	d.Delta, d.SE = s.Mean, s.SE
	if len(d.PerSeed) == 1 {
		d.SE = d.PerSeedSE[0]
	}
	d.AbsZ = math.Abs(d.Delta / d.SE)
	d.Lower, d.N, d.P = p.Lower, p.N, p.P
	d.Along = AlongTheWay(g.Band(metric), base.Band(metric))
	return d, nil
}
