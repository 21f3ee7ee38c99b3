package experiment

// Parsing a program's command line in one call: the shared flags, the
// program's own (tagged on its config), nothing else, and which flags were
// given, for defaults that depend on other flags (-full sets -epochs
// unless -epochs is given).

import (
	"errors"
	"flag"
	"fmt"
)

// Parse defines f's shared flags (which, see Register) and cfg's own
// (BindFlags) on fs, parses args, and returns the names of the flags args
// set. Anything left after the flags is an error: every setting is a flag.
func (f *Flags) Parse(fs *flag.FlagSet, args []string, which FlagSet, cfg any) (set map[string]bool, err error) {
	f.Register(fs, which)
	if err := BindFlags(fs, cfg); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (all settings are flags; see -h)", fs.Args())
	}
	set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set, nil
}

// Check returns an error naming every shared flag of which (see Register)
// whose value cannot work: -out empty, -workers below 1, and with
// SeedsFlag -seeds below 1, with SubsetFlag -train-n or -test-n below 0.
// Programs call it from their own validation, so that a config built in a
// test is checked as one built from flags.
func (f Flags) Check(which FlagSet) error {
	var errs []error
	if f.Out == "" {
		errs = append(errs, errors.New("-out is empty"))
	}
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
