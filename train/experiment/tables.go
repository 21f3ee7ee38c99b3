package experiment

// The standard files of an experiment: every evaluation of every run, the
// bands over seeds, and the wall time of each run.

import (
	"slices"

	"github.com/geluproject/gelu/train/report"
)

// WriteCurves adds name.csv to r: a row per run and evaluation, with the
// columns cols that row fills for the run and step (setting, seed, step,
// ...), then each metric of the run's curve.
func WriteCurves[S any](r *report.Report, name string, runs []*Run[S], cols []string, row func(r *Run[S], step int) []any) error {
	if len(runs) == 0 {
		return nil
	}
	w, err := r.CSV(name, slices.Concat(cols, runs[0].Curve.Metrics)...)
	if err != nil {
		return err
	}
	for _, run := range runs {
		for i, step := range run.Curve.Steps {
			cells := row(run, step)
			for k := range run.Curve.Metrics {
				cells = append(cells, run.Curve.Values[k][i])
			}
			if err := w.Write(cells...); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// WriteBands adds name.csv to r: a row per group and evaluation step, with
// the columns cols that row fills for the group and step, then for each
// metric its median, min and max over the group's runs (<metric>_median,
// _min, _max).
func WriteBands[S any](r *report.Report, name string, groups []*Group[S], cols []string, row func(g *Group[S], step int) []any) error {
	if len(groups) == 0 {
		return nil
	}
	metrics := groups[0].Runs[0].Curve.Metrics
	cols = slices.Clone(cols)
	for _, m := range metrics {
		cols = append(cols, m+"_median", m+"_min", m+"_max")
	}
	w, err := r.CSV(name, cols...)
	if err != nil {
		return err
	}
	for _, g := range groups {
		bands := make([]Band, len(metrics))
		for k, m := range metrics {
			bands[k] = g.Band(m)
		}
		for i, step := range g.Steps() {
			cells := row(g, step)
			for _, b := range bands {
				cells = append(cells, b.Median[i], b.Min[i], b.Max[i])
			}
			if err := w.Write(cells...); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// WriteTiming writes path (a CSV file outside the report, since wall
// times differ between reruns): each run's steps, seconds, steps per
// second and whether it was resumed, and a total.
func WriteTiming[S any](path string, runs []*Run[S]) error {
	var rows [][]any
	var total float64
	for _, r := range runs {
		rate := any(nil)
		if r.Seconds > 0 {
			rate = float64(r.Steps) / r.Seconds
		}
		total += r.Seconds
		rows = append(rows, []any{r.Name, r.Seed, r.Steps, r.Seconds, rate, r.Resumed})
	}
	rows = append(rows, []any{"total", nil, nil, total, nil, nil})
	return report.WriteCSV(path, []string{"run", "seed", "steps", "seconds", "steps_per_second", "resumed"}, rows)
}

// MedianPivot tabulates a quantity measured over seeds in every cell of a
// rows × columns layout (activations × optimizers, say): a row per name in
// rows, and per column the median of the cell's values times scale and
// their min–max (Summary.Range), headed "<column>: <what>, median" and
// "<column>: min–max". cell(i, j) returns the values of row i in column j.
func MedianPivot(first, what string, rows, cols []string, cell func(i, j int) []float64, scale float64) report.TableData {
	t := report.TableData{Header: []string{first}}
	for _, c := range cols {
		t.Header = append(t.Header, c+": "+what+", median", c+": min–max")
	}
	for i, name := range rows {
		row := []any{name}
		for j := range cols {
			s := Summarize(cell(i, j))
			row = append(row, scale*s.Median, s.Range(scale))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
