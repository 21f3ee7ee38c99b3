package experiment

// The plumbing of an experiment program's main: lists of names, the grid
// of settings × seeds from the shared flags, and how the program ends.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/geluproject/gelu/ops/gemm"
)

// CheckNames returns an error unless names, the value of the list flag
// -name, is a non-empty list of distinct names each accepted by valid;
// want lists the valid names for the message.
func CheckNames(name string, names []string, valid func(string) bool, want string) error {
	for i, n := range names {
		if !valid(n) || slices.Contains(names[:i], n) {
			return fmt.Errorf("-%s %q: want a comma-separated list of distinct names from %s", name, n, want)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("-%s is empty: want at least one of %s", name, want)
	}
	return nil
}

// NewGrid returns the grid of every one of settings (named by name) with
// the seeds f.Seed, f.Seed+1, … (f.Seeds of them), kept in f.Out and
// trained f.Workers at a time, each run recording metrics.
func NewGrid[S any](f Flags, settings []S, name func(S) string, metrics ...string) Grid[S] {
	return Grid[S]{Settings: settings, Seeds: SeedRange(f.Seed, f.Seeds), Name: name, Dir: f.Out, Workers: f.Workers, Metrics: metrics}
}

// Progress returns where progress goes: the grid's line per finished run
// to w (os.Stderr if nil) unless quiet, and a run's progress bar there
// too unless quiet or f.Workers > 1 (the runs' bars would interleave).
// A nil writer means none.
func (f Flags) Progress(quiet bool, w io.Writer) (grid, run io.Writer) {
	if w == nil {
		w = os.Stderr
	}
	switch {
	case quiet:
		return nil, nil
	case f.Workers > 1:
		return w, nil
	}
	return w, w
}

// Speed is what a report says of how fast its runs trained, and where.
type Speed struct {
	StepSeconds      float64 // the training steps of all runs (Run.StepSeconds), evaluations excluded
	BLAS             string  // gemm.Name
	CPUs, GOMAXPROCS int
}

// SpeedOf returns the Speed of runs on this machine.
func SpeedOf[S any](runs []*Run[S]) Speed {
	s := Speed{BLAS: gemm.Name(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	for _, g := range Groups(runs) {
		for _, r := range g.Runs {
			s.StepSeconds += r.StepSeconds
		}
	}
	return s
}

// ParseCommandLine parses the command line (flag.Parse) and ends the
// program with status 2 when anything but flags is left.
func ParseCommandLine(program string) {
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected arguments %q (flags only)\n", program, flag.Args())
		os.Exit(2)
	}
}
