package experiment

import "github.com/geluproject/gelu/train/report"

// StepSeries returns the series of y against steps (the same length).
func StepSeries(name string, steps []int, y []float64) report.Series {
	s := report.Series{Name: name, Y: y}
	for _, st := range steps {
		s.X = append(s.X, float64(st))
	}
	return s
}
