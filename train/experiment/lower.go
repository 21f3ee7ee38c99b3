package experiment

// Claims of the form "every setting in A has a lower value than every
// setting in B", checked with paired sign tests over seeds.

import "github.com/geluproject/gelu/train/report"

// Lower is the comparison "A has a lower value than B" seed by seed
// (Compare), with the medians a report shows beside it.
type Lower struct {
	A, B             string  // the settings' names
	MedianA, MedianB float64 // the medians over seeds
	Paired
}

// CompareLower compares the values a of the setting named nameA with b of
// nameB, seed by seed.
func CompareLower(nameA, nameB string, a, b []float64) Lower {
	return Lower{A: nameA, B: nameB, MedianA: Median(a), MedianB: Median(b), Paired: Compare(a, b)}
}

// AllLower checks "every setting in a has a lower value than every one in
// b" with the values value(name) returns, nil for a setting that did not
// run. The verdict at level alpha is Confirmed when every pair is,
// NotConfirmed when any pair is significantly the other way, Unclear
// otherwise. It compares the pairs a × b in order and stops, with ok
// false, at the first whose settings did not both run: pairs are those
// compared until then.
func AllLower(a, b []string, value func(name string) []float64, alpha float64) (pairs []Lower, verdict report.Verdict, ok bool) {
	confirmed, refuted := true, false
	for _, x := range a {
		for _, y := range b {
			vx, vy := value(x), value(y)
			if vx == nil || vy == nil {
				return pairs, report.Unclear, false
			}
			p := CompareLower(x, y, vx, vy)
			pairs = append(pairs, p)
			confirmed, refuted = confirmed && p.Verdict(alpha) == report.Confirmed, refuted || p.Verdict(alpha) == report.NotConfirmed
		}
	}
	switch {
	case refuted:
		return pairs, report.NotConfirmed, true
	case confirmed:
		return pairs, report.Confirmed, true
	}
	return pairs, report.Unclear, true
}
