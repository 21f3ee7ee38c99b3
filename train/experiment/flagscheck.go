package experiment

// The bounds of the shared flags, checked as CheckFlags checks a program's
// own: a config built in a test is refused as one built from flags.

import (
	"errors"
	"fmt"
)

// Check returns an error naming every shared flag of which, and -workers,
// whose value is out of range ("-seeds 0: want ≥ 1"): -workers and -seeds
// below 1, -train-n and -test-n below 0. -out, -seed and the shard flags
// are not checked here (ResolveShard checks the last).
func (f Flags) Check(which FlagSet) error {
	var errs []error
	atLeast := func(name string, v, min int) {
		if v < min {
			errs = append(errs, fmt.Errorf("-%s %d: want ≥ %d", name, v, min))
		}
	}
	atLeast("workers", f.Workers, 1)
	if which&SeedsFlag != 0 {
		atLeast("seeds", f.Seeds, 1)
	}
	if which&SubsetFlag != 0 {
		atLeast("train-n", f.TrainN, 0)
		atLeast("test-n", f.TestN, 0)
	}
	return errors.Join(errs...)
}
