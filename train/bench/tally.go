package bench

// Best of rounds: each (side, workload, setting) keeps its fastest round,
// and each (side, workload) is reported at its fastest setting.

// Sides, as a Tally keys them: this project on the machine's default BLAS
// (what a user gets), this project on the other BLAS (MachineBLAS), and
// the peer. The tables head this project's columns with the BLAS the
// children reported (Tally.Column).
const (
	Ours  = "this project"
	Other = "this project, other BLAS"
	Peer  = "PyTorch"
)

// Tally keeps, per side, workload and setting, the best round.
type Tally map[string]map[string]map[string]Result

// Add records a round's result r of side at setting s on workload w,
// keeping it if it is the fastest so far.
func (t Tally) Add(side, w, s string, r Result) {
	if t[side] == nil {
		t[side] = map[string]map[string]Result{}
	}
	if t[side][w] == nil {
		t[side][w] = map[string]Result{}
	}
	if old, ok := t[side][w][s]; !ok || r.Seconds < old.Seconds {
		t[side][w][s] = r
	}
}

// Best returns the best setting of side for w and its result; ties go to
// the setting whose name sorts first. ok is false when side never ran w.
func (t Tally) Best(side, w string) (setting string, r Result, ok bool) {
	for s, res := range t[side][w] {
		if setting == "" || res.Seconds < r.Seconds || (res.Seconds == r.Seconds && s < setting) {
			setting, r = s, res
		}
	}
	return setting, r, setting != ""
}

// Hopeless is how many times slower than its side's best a setting must
// have been on a workload not to be run again in later rounds: PyTorch at 2
// threads on a loaded 2-core machine took 1.5 s per 4 ms MLP step (OpenMP
// threads spinning against each other), a quarter of an hour per round.
const Hopeless = 5

// Skip reports whether setting s of side has been over Hopeless times
// slower than the side's best on w.
func (t Tally) Skip(side, w, s string) bool {
	r, ok := t[side][w][s]
	_, b, _ := t.Best(side, w)
	return ok && r.Seconds > Hopeless*b.Seconds
}
