package experiment

// Looking up, filtering and summarizing the groups of a grid whose
// settings fall into families (one optimizer, one activation) with one
// group reported per family (Best): the lookups and tables every such
// report repeats.

import (
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// FindGroup returns the first group whose setting satisfies match, or nil.
func FindGroup[S any](gs []*Group[S], match func(S) bool) *Group[S] {
	if i := slices.IndexFunc(gs, func(g *Group[S]) bool { return match(g.Setting) }); i >= 0 {
		return gs[i]
	}
	return nil
}

// Only returns the groups whose setting satisfies keep, in order.
func Only[S any](gs []*Group[S], keep func(S) bool) []*Group[S] {
	var out []*Group[S]
	for _, g := range gs {
		if keep(g.Setting) {
			out = append(out, g)
		}
	}
	return out
}

// DivergedRuns returns the runs that diverged (Run.Diverged set), in order.
func DivergedRuns[S any](runs []*Run[S]) []*Run[S] {
	var out []*Run[S]
	for _, r := range runs {
		if r.Diverged != "" {
			out = append(out, r)
		}
	}
	return out
}

// SetFinals records, for each metric with at least one finite final value
// in g, the Summary of g's final values under prefix+"final."+metric
// (Summary.Set).
func SetFinals[S any](r *report.Report, prefix string, g *Group[S], metrics []string) {
	for _, m := range metrics {
		if s := Summarize(g.Final(m)); s.N > 0 {
			s.Set(r, prefix+"final."+m)
		}
	}
}

// SelectionTable tabulates a choice among groups (a learning rate per
// family, say): one row per group, cells(g) under header, then a column
// "chosen" saying whether chosen holds g. When nothing was left to choose
// (no more groups than chosen ones) the table is empty.
func SelectionTable[S any](header []string, groups, chosen []*Group[S], cells func(*Group[S]) []any) report.TableData {
	if len(groups) <= len(chosen) {
		return report.TableData{}
	}
	t := report.TableData{Header: append(slices.Clone(header), "chosen")}
	for _, g := range groups {
		t.Rows = append(t.Rows, append(cells(g), slices.Contains(chosen, g)))
	}
	return t
}

// Set records d under prefix: prefix.delta_<metric> (Delta),
// prefix.delta_<metric>_se (SE), prefix.lower_seeds (Lower) and
// prefix.p_value (P).
func (d Diff) Set(r *report.Report, prefix, metric string) {
	r.Set(prefix+".delta_"+metric, d.Delta)
	r.Set(prefix+".delta_"+metric+"_se", d.SE)
	r.Set(prefix+".lower_seeds", d.Lower)
	r.Set(prefix+".p_value", d.P)
}

// DiffsFromFirst compares every group after the first with the first
// (DiffFrom with vector, metric and blocks) and tabulates the per-seed
// differences: one row per group and seed, "difference" (group − first),
// "seed", then cells(delta, se) under header. Fewer than two groups give
// nothing.
func DiffsFromFirst[S any](gs []*Group[S], vector, metric string, blocks int, header []string,
	cells func(delta, se float64) []any) ([]Diff, report.TableData, error) {
	var ds []Diff
	var t report.TableData
	if len(gs) < 2 {
		return nil, t, nil
	}
	base := gs[0]
	t.Header = append([]string{"difference", "seed"}, header...)
	for _, g := range gs[1:] {
		d, err := DiffFrom(g, base, vector, metric, blocks)
		if err != nil {
			return nil, report.TableData{}, err
		}
		for i, delta := range d.PerSeed {
			t.Rows = append(t.Rows, append([]any{g.Name + " − " + base.Name, d.Seeds[i]}, cells(delta, d.PerSeedSE[i])...))
		}
		ds = append(ds, d)
	}
	return ds, t, nil
}
