package experiment

// LossErrorPanels returns the two panels of a family's groups (one
// optimizer's reported settings, say) that classifier reports draw: loss
// draws lossMetric and errs draws errMetric in percent. Both have a line
// per group, named line(g) and dashed where dashed(g) (nil: none), drawn
// against x on a log y axis when the lines span more than 30-fold, and
// tabulated under titles (Panel).
func LossErrorPanels[S any](groups []*Group[S], lossMetric, errMetric string, x func(step int) float64, titles []string,
	line func(*Group[S]) string, dashed func(*Group[S]) bool) (loss, errs Panel[S]) {
	loss = Panel[S]{Groups: groups, Metric: lossMetric, X: x, Titles: titles, Dashed: dashed, LogAbove: 30}
	for _, g := range groups {
		loss.Lines = append(loss.Lines, line(g))
	}
	errs = loss
	errs.Metric, errs.Scale = errMetric, 100
	return loss, errs
}
