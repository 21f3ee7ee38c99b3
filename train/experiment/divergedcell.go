package experiment

// DivergedCell is a table cell saying where r diverged: DivergedStep, or
// "no" for a run that did not diverge.
func (r *Run[S]) DivergedCell() any {
	if s := r.DivergedStep(); s > 0 {
		return s
	}
	return "no"
}
