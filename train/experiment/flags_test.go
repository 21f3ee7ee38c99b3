package experiment

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/ops/activation"
)

func TestListFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lrs, widths, inits, acts := Floats{0.1, 0.3}, Ints{128}, Strings{"default"}, Activations{activation.ReLU}
	fs.Var(&lrs, "lrs", "")
	fs.Var(&widths, "hidden", "")
	fs.Var(&inits, "bias", "")
	fs.Var(&acts, "acts", "")
	if lrs.String() != "0.1,0.3" || acts.String() != "relu" { // the defaults -h shows
		t.Errorf("defaults shown as %q, %q", lrs.String(), acts.String())
	}
	err := fs.Parse([]string{"-lrs", " 1e-3, 0.5,", "-hidden", "64,-2", "-bias", "default,-1", "-acts", "gelu_tanh,elu:0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lrs, Floats{1e-3, 0.5}) || !slices.Equal(widths, Ints{64, -2}) || !slices.Equal(inits, Strings{"default", "-1"}) ||
		len(acts) != 2 || acts[0] != activation.GELUTanh || acts[1].Name() != "elu:0.5" {
		t.Errorf("parsed %v %v %v %v", lrs, widths, inits, acts)
	}
	for _, c := range []struct {
		v          flag.Value
		arg, wants string
	}{
		{&lrs, "0.1,x", `"x" is not a finite number`}, {&lrs, "0.1,NaN", "finite"}, {&lrs, "0.1,1e-1", "twice"},
		{&lrs, " , ", "empty list"}, {&widths, "1.5", "not an integer"}, {&inits, "a,a", "twice"},
		{&acts, "relu,tanh", "unknown activation"}, {&acts, "relu,RELU", "twice"},
	} {
		if err := c.v.Set(c.arg); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("Set(%q): %v, want an error containing %q", c.arg, err, c.wants)
		}
	}
	if !slices.Equal(lrs, Floats{1e-3, 0.5}) {
		t.Errorf("a failed Set changed the list to %v", lrs)
	}
}

func TestFlagsRegister(t *testing.T) {
	for _, c := range []struct {
		which FlagSet
		want  []string
	}{
		{0, []string{"out", "seed", "workers"}},
		{SeedsFlag | SubsetFlag, []string{"out", "seed", "seeds", "test-n", "train-n", "workers"}},
		{SeedsFlag | ResumeFlag | SubsetFlag | ShardFlags, []string{"merge", "out", "resume", "seed", "seeds", "shard", "shards", "test-n", "train-n", "workers"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		f := Flags{Out: "out/x", Seed: 7, Seeds: 5, Workers: 3}
		f.Register(fs, c.which)
		var names []string
		fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
		if !slices.Equal(names, c.want) {
			t.Errorf("flags %v, want %v", names, c.want)
		}
		if fs.Lookup("seed").DefValue != "7" || fs.Lookup("out").DefValue != "out/x" {
			t.Errorf("defaults: -seed %s -out %s", fs.Lookup("seed").DefValue, fs.Lookup("out").DefValue)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	f := Flags{Seeds: 5, Workers: 2}
	f.Register(fs, SeedsFlag|SubsetFlag|ShardFlags)
	if err := fs.Parse([]string{"-seeds", "2", "-train-n", "100", "-shard", "1/3", "-out", "o"}); err != nil {
		t.Fatal(err)
	}
	if f.Seeds != 2 || f.TrainN != 100 || f.TestN != 0 || f.Out != "o" || f.Workers != 2 {
		t.Errorf("parsed %+v", f)
	}
	if s, err := f.ResolveShard(env(JobIndex, "0", ShardCountEnv, "2")); err != nil || s != (Shard{1, 3}) {
		t.Errorf("-shard 1/3 in an Indexed Job pod: %v, %v (the flag wins)", s, err)
	}
	f.Merge = true
	if _, err := f.ResolveShard(env()); err == nil || !strings.Contains(err.Error(), "-merge") {
		t.Errorf("-merge with -shard: %v", err)
	}
	f.Shard = ""
	if s, err := f.ResolveShard(env(SlurmTaskID, "1", SlurmTaskCount, "2", SlurmTaskMin, "0")); err != nil || s != (Shard{0, 1}) {
		t.Errorf("-merge in a Slurm task: %v, %v; want the whole grid", s, err)
	}
}

func TestSubset(t *testing.T) {
	x, labels := make([]float32, 100), make([]int, 100)
	for i := range x {
		x[i], labels[i] = float32(i), i%10
	}
	d := &datasets.Dataset{Name: "toy", X: x, Features: 1, Labels: labels, Classes: 10}
	rows := func(d *datasets.Dataset) []float32 { return d.X }
	a, err := Subset(d, 30, 1, "n-train")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Subset(d, 30, 1, "n-train")
	c, _ := Subset(d, 30, 2, "n-train")
	e, _ := Subset(d, 30, 1, "n-test")
	ra := rows(a)
	if len(ra) != 30 || !slices.IsSorted(ra) || len(slices.Compact(slices.Clone(ra))) != 30 {
		t.Errorf("subset %v: want 30 distinct examples in the set's order", ra)
	}
	if !slices.Equal(ra, rows(b)) || slices.Equal(ra, rows(c)) || slices.Equal(ra, rows(e)) {
		t.Error("the subset does not follow the seed and the stream")
	}
	if slices.Equal(ra, x[:30]) {
		t.Error("the subset is the first 30 examples")
	}
	for i, v := range ra {
		if a.Labels[i] != int(v)%10 {
			t.Errorf("example %v has label %v: labels do not follow their images", v, a.Labels[i])
		}
	}
	if all, _ := Subset(d, 0, 1, "n-train"); all != d {
		t.Error("n = 0 is not the whole set")
	}
	if _, err := Subset(d, 101, 1, "n-train"); err == nil || !strings.Contains(err.Error(), "has 100") {
		t.Errorf("n > the set: %v", err)
	}
}
