package experiment

import (
	"maps"
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// FinalTable tabulates the reported groups of a grid (Best) at the end of
// training and records their summary values: what a report's table of
// final results repeats for every group.
type FinalTable[S any] struct {
	Header []string              // the table's columns
	Row    func(*Group[S]) []any // a group's cells, in Header's order
	// Key is the prefix of a group's summary keys ("adam.gelu"); under it
	// go Key.diverged (Group.Diverged), Key.final.<metric> for each of
	// Metrics (SetFinals), Key.<name> for each of Values (recorded as
	// they are) and the Summary of each of Summaries (Summary.Set).
	Key       func(S) string
	Metrics   []string
	Values    map[string]func(S) any
	Summaries map[string]func(*Group[S]) []float64
}

// Write records the summary values of groups in r and returns the table:
// one row per group, in order.
func (f FinalTable[S]) Write(r *report.Report, groups []*Group[S]) report.TableData {
	t := report.TableData{Header: f.Header}
	for _, g := range groups {
		p := f.Key(g.Setting) + "."
		r.Set(p+"diverged", g.Diverged())
		for _, name := range slices.Sorted(maps.Keys(f.Values)) { // sorted: the same first error every run
			r.Set(p+name, f.Values[name](g.Setting))
		}
		for _, name := range slices.Sorted(maps.Keys(f.Summaries)) {
			Summarize(f.Summaries[name](g)).Set(r, p+name)
		}
		SetFinals(r, p, g, f.Metrics)
		t.Rows = append(t.Rows, f.Row(g))
	}
	return t
}
