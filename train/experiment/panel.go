package experiment

// One figure of an experiment's report: several settings' median curves of
// one metric, each shaded over seeds, and the same medians as a table.

import "github.com/geluproject/gelu/train/report"

// Panel draws one metric of several groups: a line per group, the median
// over seeds shaded from the lowest to the highest seed (Band.Series), and
// the same medians tabulated at chosen steps (MedianTable).
type Panel[S any] struct {
	Groups []*Group[S]
	Metric string
	Scale  float64                // multiplies every value (100 for percent); 0 means 1
	X      func(step int) float64 // the x of a step (an epoch, say); nil: the step
	// Lines are the legend entries and Titles the table's column headers,
	// one per group; Titles nil means Lines.
	Lines, Titles []string
	Dashed        func(*Group[S]) bool // draw this group's line dashed; nil: none
	// LogAbove, if positive, sets a log y axis when the lines' values span
	// more than this factor (report.WideRange).
	LogAbove float64
}

func (p Panel[S]) scale() float64 {
	if p.Scale == 0 {
		return 1
	}
	return p.Scale
}

// Plot returns spec (its title, labels and size) with a series per group
// that has a point to draw; Unplotted names the others.
func (p Panel[S]) Plot(spec report.PlotSpec) report.PlotSpec {
	spec.Series = nil
	for i, g := range p.Groups {
		s := g.Band(p.Metric).Scale(p.scale()).Series(p.Lines[i], p.X)
		if len(s.X) == 0 {
			continue
		}
		s.Dashed = p.Dashed != nil && p.Dashed(g)
		spec.Series = append(spec.Series, s)
	}
	if p.LogAbove > 0 {
		spec.LogY = report.WideRange(spec.Series, p.LogAbove)
	}
	return spec
}

// Unplotted returns the lines of the groups that have no point to draw
// (every run diverged before its first evaluation), which Plot leaves out.
func (p Panel[S]) Unplotted() (lines []string) {
	for i, g := range p.Groups {
		if len(g.Band(p.Metric).Steps) == 0 {
			lines = append(lines, p.Lines[i])
		}
	}
	return lines
}

// Table returns the groups' medians at steps: a row per step starting
// with its x (X, or the step) under xName, then a column per group.
func (p Panel[S]) Table(xName string, steps []int) report.TableData {
	titles, x := p.Titles, p.X
	if titles == nil {
		titles = p.Lines
	}
	if x == nil {
		x = func(step int) float64 { return float64(step) }
	}
	return MedianTable(xName, x, steps, p.Groups, titles, p.Metric, p.scale())
}
