package experiment

import "math"

// BestRun returns the run whose setting matches with the largest value:
// the first such run when none beats it, a NaN value losing to any later
// match; nil when no setting matches.
func BestRun[S any](runs []*Run[S], match func(S) bool, value func(*Run[S]) float64) *Run[S] {
	var best *Run[S]
	for _, r := range runs {
		if match(r.Setting) && (best == nil || math.IsNaN(value(best)) || value(r) > value(best)) {
			best = r
		}
	}
	return best
}
