package experiment

// The flags every experiment program shares, one name and one meaning
// each, registered in one call:
//
//	f := experiment.Flags{Out: "out/gelu-vs-relu", Seed: 1, Seeds: 5, Workers: runtime.NumCPU()}
//	f.Register(flag.CommandLine, experiment.SeedsFlag|experiment.ResumeFlag|experiment.SubsetFlag|experiment.ShardFlags)
//	flag.Parse()
//	shard, err := f.ResolveShard(os.Getenv)  // -shard, or a Slurm array task, or a Kubernetes Indexed Job pod
//	train, test, err := f.Subsets(train, test)  // -train-n, -test-n

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph/rng"
)

// Flags are the settings shared by experiment programs. Values set before
// Register are the defaults.
type Flags struct {
	Out     string // -out: the output folder
	Seed    uint64 // -seed: the first seed
	Seeds   int    // -seeds: runs per setting, with seeds Seed, Seed+1, …
	Workers int    // -workers: runs trained at once
	Resume  bool   // -resume: reuse finished runs whose fingerprint matches
	// -train-n, -test-n: a seeded subset of this many training and test
	// examples (0: all), the same for every run; see Subsets.
	TrainN, TestN int
	Shard         string // -shard i/n: this worker's part of the grid; see ResolveShard
	Shards        int    // -shards n: the number of workers, when the index comes from JOB_COMPLETION_INDEX
	Merge         bool   // -merge: train nothing, build the report from the shards' runs
}

// FlagSet selects the optional flags Register defines; -out, -seed and
// -workers are always defined.
type FlagSet uint

const (
	SeedsFlag  FlagSet = 1 << iota // -seeds
	ResumeFlag                     // -resume
	SubsetFlag                     // -train-n, -test-n
	ShardFlags                     // -shard, -shards, -merge
)

// shardFlagNames are the flags that say how the grid is split, not what
// it computes: Command leaves them out.
var shardFlagNames = []string{"shard", "shards", "merge"}

// Register defines the shared flags in which on fs, with f's values as
// defaults.
func (f *Flags) Register(fs *flag.FlagSet, which FlagSet) {
	fs.StringVar(&f.Out, "out", f.Out, "output folder; created if needed, the files this program writes are replaced")
	fs.Uint64Var(&f.Seed, "seed", f.Seed, "first seed: it fixes the initial weights, the data order and the -train-n/-test-n subsets")
	fs.IntVar(&f.Workers, "workers", f.Workers, "runs trained at once, one BLAS thread each (results do not depend on it)")
	if which&SeedsFlag != 0 {
		fs.IntVar(&f.Seeds, "seeds", f.Seeds, "runs per setting, with seeds -seed, -seed+1, …, paired across settings")
	}
	if which&ResumeFlag != 0 {
		fs.BoolVar(&f.Resume, "resume", f.Resume, "reuse finished runs found in -out whose settings match, instead of training them again")
	}
	if which&SubsetFlag != 0 {
		fs.IntVar(&f.TrainN, "train-n", f.TrainN, "use a seeded subset of this many training examples, for quick trials (0: all)")
		fs.IntVar(&f.TestN, "test-n", f.TestN, "use a seeded subset of this many test examples (0: all)")
	}
	if which&ShardFlags != 0 {
		fs.StringVar(&f.Shard, "shard", f.Shard, "i/n: train only shard i of n of the grid into -out, shared by the n workers "+
			"(default: from a Slurm job array or a Kubernetes Indexed Job, else the whole grid)")
		fs.IntVar(&f.Shards, "shards", f.Shards, "the number of workers, for a Kubernetes Indexed Job (default: $SHARD_COUNT)")
		fs.BoolVar(&f.Merge, "merge", f.Merge, "train nothing: build the report from the runs the shards left in -out")
	}
}

// ResolveShard returns this worker's shard (ResolveShard(f.Shard,
// f.Shards, getenv)); with -merge it is the whole grid, whatever the
// environment says.
func (f *Flags) ResolveShard(getenv func(string) string) (Shard, error) {
	if f.Merge {
		if f.Shard != "" || f.Shards != 0 {
			return Shard{}, fmt.Errorf("-merge trains nothing: it takes no -shard or -shards")
		}
		return Shard{Index: 0, Count: 1}, nil
	}
	return ResolveShard(f.Shard, f.Shards, getenv)
}

// Command returns the command line args without the flags that only say
// how the grid is split (-shard, -shards, -merge), for a report: the same
// grid run whole or in shards gives the same report.
func Command(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if i == 0 || !strings.HasPrefix(a, "-") || !slices.Contains(shardFlagNames, name) {
			out = append(out, a)
			continue
		}
		if name != "merge" && !hasValue {
			i++ // "-shard 1/4": the value is the next argument (a bool flag like -merge never takes one)
		}
	}
	return out
}

// Subsets returns the -train-n and -test-n subsets of train and test:
// Subset(train, f.TrainN, f.Seed, "n-train") and likewise "n-test".
func (f *Flags) Subsets(train, test *datasets.Dataset) (*datasets.Dataset, *datasets.Dataset, error) {
	tr, err := Subset(train, f.TrainN, f.Seed, "n-train")
	if err != nil {
		return nil, nil, fmt.Errorf("-train-n: %w", err)
	}
	te, err := Subset(test, f.TestN, f.Seed, "n-test")
	if err != nil {
		return nil, nil, fmt.Errorf("-test-n: %w", err)
	}
	return tr, te, nil
}

// Subset returns n examples of d drawn without replacement by the random
// stream (seed, stream), in d's order; d itself when n is 0 or d.Len().
// A seeded draw, unlike the first n, keeps the classes' proportions
// whatever order d is stored in. (The streams "n-train" and "n-test" of
// Flags.Subsets are the names gelu-vs-relu used before the flags were
// shared, so its subsets did not change.)
func Subset(d *datasets.Dataset, n int, seed uint64, stream string) (*datasets.Dataset, error) {
	switch {
	case n == 0 || n == d.Len():
		return d, nil
	case n < 0 || n > d.Len():
		return nil, fmt.Errorf("a subset of %d examples, but the set has %d", n, d.Len())
	}
	idx := rng.New(seed, stream).Perm(d.Len())[:n]
	slices.Sort(idx)
	return d.Subset(idx)
}
