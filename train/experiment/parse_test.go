package experiment

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestFlagsParse(t *testing.T) {
	type config struct {
		Epochs int  `flag:"epochs" help:"passes"`
		Full   bool `flag:"full" help:"the long run"`
	}
	parse := func(args ...string) (Flags, config, map[string]bool, error) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f, c := Flags{Out: "out/x", Seed: 1, Seeds: 5, Workers: 2}, config{Epochs: 3}
		set, err := f.Parse(fs, args, SeedsFlag|SubsetFlag, &c)
		return f, c, set, err
	}
	f, c, set, err := parse("-full", "-seeds", "2", "-train-n", "100")
	if err != nil {
		t.Fatal(err)
	}
	if f.Seeds != 2 || f.TrainN != 100 || f.Out != "out/x" || !c.Full || c.Epochs != 3 {
		t.Errorf("parsed %+v and %+v", f, c)
	}
	if !set["full"] || !set["seeds"] || !set["train-n"] || set["epochs"] || set["out"] || len(set) != 3 {
		t.Errorf("flags given: %v, want full, seeds and train-n", set)
	}
	for args, want := range map[string]string{"-full extra": `unexpected arguments ["extra"]`, "-resume": "not defined"} {
		if _, _, _, err := parse(strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", args, err, want)
		}
	}
}

func TestFlagsCheck(t *testing.T) {
	good := Flags{Out: "o", Seeds: 1, Workers: 1}
	if err := good.Check(SeedsFlag | SubsetFlag); err != nil {
		t.Errorf("valid flags: %v", err)
	}
	bad := Flags{Seeds: 0, Workers: 0, TrainN: -1, TestN: 5}
	err := bad.Check(SeedsFlag | SubsetFlag)
	for _, want := range []string{"-out is empty", "-workers 0: want ≥ 1", "-seeds 0: want ≥ 1", "-train-n -1: want ≥ 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "test-n") {
		t.Errorf("error %v names -test-n 5, which is valid", err)
	}
	// Without SeedsFlag and SubsetFlag those flags are not the program's:
	// their zero values are not errors.
	if err := (Flags{Out: "o", Workers: 1, TrainN: -1}).Check(0); err != nil {
		t.Errorf("flags the program does not take were checked: %v", err)
	}
}
