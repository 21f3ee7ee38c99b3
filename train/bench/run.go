package bench

// The rounds: every workload on every side at every setting, round after
// round, alternating the sides workload by workload; each (workload,
// setting) keeps its best round (Tally).

import (
	"fmt"
	"io"
)

// Side is one side of the comparison: its name in the tables, its
// settings for a workload, and how it measures a workload at a setting.
type Side struct {
	Name     string
	Settings func(w Workload) []Setting
	Measure  func(w Workload, s Setting) (Result, error)
}

// ChildSide is a side of this project: each workload at each of
// settings(w) in a child process (Measure) timing reps runs.
func ChildSide(name string, reps int, settings func(w Workload) []Setting) Side {
	return Side{Name: name, Settings: settings, Measure: func(w Workload, s Setting) (Result, error) {
		return Measure(w.Name, reps, s.Env)
	}}
}

// Run measures ws on every side for rounds rounds: in each round, workload
// by workload, each side at each of its settings, except a setting over
// Hopeless times slower than its side's best on the workload in an earlier
// round. A line per measurement goes to progress.
func Run(ws []Workload, sides []Side, rounds int, progress io.Writer) (Tally, error) {
	t := Tally{}
	for round := 1; round <= rounds; round++ {
		for _, w := range ws {
			for _, side := range sides {
				for _, s := range side.Settings(w) {
					if t.Skip(side.Name, w.Name, s.Name) {
						continue
					}
					res, err := side.Measure(w, s)
					if err != nil {
						return nil, err
					}
					t.Add(side.Name, w.Name, s.Name, res)
					fmt.Fprintf(progress, "round %d  %-28s %-26s %-28s %10.4g %s\n", round, w.Name, side.Name, s.Name, w.Value(res.Seconds), w.Family.Unit)
				}
			}
		}
	}
	return t, nil
}
