package experiment

// Runs picked out of a grid, and their curves as plot lines one run each
// (where a Group's Band would be over seeds).

import "github.com/geluproject/gelu/train/report"

// Select returns the runs whose setting matches, in order.
func Select[S any](runs []*Run[S], match func(S) bool) []*Run[S] {
	var out []*Run[S]
	for _, r := range runs {
		if match(r.Setting) {
			out = append(out, r)
		}
	}
	return out
}

// RunSeries returns one plot line per run: its metric at its evaluation
// steps, named name(run). It is the run's Band as a group of one, so a
// diverged run's line ends where its values stop being finite.
func RunSeries[S any](runs []*Run[S], metric string, name func(*Run[S]) string) []report.Series {
	var out []report.Series
	for _, r := range runs {
		g := &Group[S]{Setting: r.Setting, Name: r.Name, Runs: []*Run[S]{r}}
		out = append(out, g.Band(metric).Series(name(r), nil))
	}
	return out
}
