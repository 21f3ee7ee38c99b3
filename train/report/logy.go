package report

// SplitLogY splits series for a log-y plot: those with some y > 0, which
// it can show, and the names of the others (every y ≤ 0 or NaN), which it
// cannot, for the caption to name instead. Order is kept.
func SplitLogY(series []Series) (shown []Series, hidden []string) {
	for _, s := range series {
		positive := false
		for _, y := range s.Y {
			positive = positive || y > 0
		}
		if positive {
			shown = append(shown, s)
		} else {
			hidden = append(hidden, s.Name)
		}
	}
	return shown, hidden
}
