package experiment

// DivergedStep returns the step at which r diverged, counted from 1 like
// the steps of a training curve: the one after the r.Steps steps Train
// completed, whose loss, gradient or weight was NaN or ±Inf. It is 0 for
// a run that did not diverge.
func (r *Run[S]) DivergedStep() int {
	if r.Diverged == "" {
		return 0
	}
	return r.Steps + 1
}

// DivergedCell is a table cell saying where r diverged: DivergedStep, or
// "no" for a run that did not diverge.
func (r *Run[S]) DivergedCell() any {
	if s := r.DivergedStep(); s > 0 {
		return s
	}
	return "no"
}
