package experiment

import "github.com/geluproject/gelu/train/report"

// Comparisons compare the reported groups of a grid (one per setting, as
// Best returns them) two at a time, seed by seed, on named quantities, and
// record each comparison in a report: what a report's claims check.
type Comparisons[S any] struct {
	Report *report.Report
	Groups []*Group[S]                          // the groups compared
	Values map[string]func(*Group[S]) []float64 // the quantities, by key
}

// Compare compares the group whose setting satisfies a (named nameA in the
// Versus) with the one satisfying b (nameB) on the quantity key, seed by
// seed (CompareNamed, medians times scale). A non-empty record is the
// summary key the result is recorded under (Versus.Set). ok is false, and
// nothing is recorded, when either group is missing.
func (c Comparisons[S]) Compare(key string, a, b func(S) bool, nameA, nameB string, scale float64, record string) (v Versus, ok bool) {
	ga, gb := FindGroup(c.Groups, a), FindGroup(c.Groups, b)
	if ga == nil || gb == nil {
		return Versus{}, false
	}
	v = CompareNamed(nameA, nameB, c.Values[key](ga), c.Values[key](gb), scale)
	if record != "" {
		v.Set(c.Report, record)
	}
	return v, true
}
