package experiment

// Claims of the form "every setting in A has a lower value than every
// setting in B", checked with paired sign tests over seeds.

import "github.com/geluproject/gelu/train/report"

// AllLower checks "every setting in a has a lower value than every one in
// b" with the values value(name) returns, nil for a setting that did not
// run: each pair compared seed by seed (CompareNamed), the verdict at
// level alpha the Weakest of theirs. It compares the pairs a × b in order
// and stops, with ok false, at the first whose settings did not both run:
// pairs are those compared until then.
func AllLower(a, b []string, value func(name string) []float64, alpha float64) (pairs []Versus, verdict report.Verdict, ok bool) {
	var verdicts []report.Verdict
	for _, x := range a {
		for _, y := range b {
			vx, vy := value(x), value(y)
			if vx == nil || vy == nil {
				return pairs, report.Unclear, false
			}
			pairs = append(pairs, CompareNamed(x, y, vx, vy, 1))
			verdicts = append(verdicts, pairs[len(pairs)-1].Verdict(alpha))
		}
	}
	return pairs, Weakest(verdicts...), true
}
