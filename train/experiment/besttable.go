package experiment

import "github.com/geluproject/gelu/train/report"

// BestTable tabulates the best run of every cell of a grid of settings
// (a learning rate chosen per activation and bias init, say): under
// header, one row per rowNames[i], whose cell j (column j+1 of header)
// is cell(best), best being BestRun of the runs whose setting satisfies
// match(i, j, setting) by value, or "—" when no run matches.
func BestTable[S any](runs []*Run[S], header, rowNames []string, match func(i, j int, s S) bool,
	value func(*Run[S]) float64, cell func(*Run[S]) any) report.TableData {
	t := report.TableData{Header: header}
	for i, name := range rowNames {
		row := []any{name}
		for j := 1; j < len(header); j++ {
			best := BestRun(runs, func(s S) bool { return match(i, j-1, s) }, value)
			if best == nil {
				row = append(row, "—")
				continue
			}
			row = append(row, cell(best))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
