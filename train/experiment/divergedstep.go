package experiment

import "fmt"

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

// UnlessDiverged returns cell, or for a run that diverged the cell
// "diverged at step N" (DivergedStep): what a table of final values shows
// instead of a value the run never reached.
func (r *Run[S]) UnlessDiverged(cell any) any {
	if s := r.DivergedStep(); s > 0 {
		return fmt.Sprintf("diverged at step %d", s)
	}
	return cell
}
