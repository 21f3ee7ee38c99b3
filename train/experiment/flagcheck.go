package experiment

import (
	"errors"
	"fmt"
)

// Check reports the shared flags no program can run with: -train-n or
// -test-n below 0 and -workers below 1, one error per flag ("-workers 0:
// want ≥ 1"). CheckFlags does not see them: Flags has no check tags, as
// Register, not BindFlags, defines its flags. Programs call both:
//
//	err := errors.Join(experiment.CheckFlags(c), c.Flags.Check())
func (f Flags) Check() error {
	var errs []error
	for _, c := range []struct {
		name     string
		value, n int
	}{{"train-n", f.TrainN, 0}, {"test-n", f.TestN, 0}, {"workers", f.Workers, 1}} {
		if c.value < c.n {
			errs = append(errs, fmt.Errorf("-%s %d: want ≥ %d", c.name, c.value, c.n))
		}
	}
	return errors.Join(errs...)
}
