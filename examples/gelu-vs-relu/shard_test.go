package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geluproject/gelu/train/experiment"
)

// The grid split over three shards writing into one folder gives the same
// files as one process (besides timing.csv and the shards' grid.json):
// the last shard to finish writes the report, and so does -merge.
func TestShardsMakeTheSameReport(t *testing.T) {
	one, sharded := t.TempDir(), t.TempDir()
	if _, err := run(context.Background(), small(one)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c := small(sharded)
		c.Part = experiment.Shard{Index: i, Count: 3}
		res, err := run(context.Background(), c)
		if last := i == 2; last && (err != nil || len(res.Runs) != 8) || !last && !errors.Is(err, experiment.ErrIncomplete) {
			t.Fatalf("shard %d/3: %v", i, err)
		}
	}
	compareTrees(t, one, sharded)
	if err := os.Remove(filepath.Join(sharded, "report.md")); err != nil {
		t.Fatal(err)
	}
	c := small(sharded)
	c.Merge = true
	if _, err := run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, one, sharded)
}

func TestParseFlags(t *testing.T) {
	parse := func(args []string, env ...string) (config, error) {
		fs := flag.NewFlagSet("gelu-vs-relu", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseFlags(fs, args, func(k string) string {
			if i := slices.Index(env, k); i >= 0 {
				return env[i+1]
			}
			return ""
		})
	}
	c, err := parse([]string{"-train-n", "640", "-test-n", "256", "-shard", "1/3", "-epochs", "2", "-full"})
	if err != nil {
		t.Fatal(err)
	}
	if c.TrainN != 640 || c.TestN != 256 || c.Part != (experiment.Shard{Index: 1, Count: 3}) || c.Epochs != 2 || c.Seeds != 5 || c.Workers < 1 {
		t.Errorf("parsed %+v", c)
	}
	if want := []string{"gelu-vs-relu", "-train-n", "640", "-test-n", "256", "-epochs", "2", "-full"}; !slices.Equal(c.Args, want) {
		t.Errorf("the report's command is %q, want %q", c.Args, want)
	}
	c, err = parse(nil, "SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "4", "SLURM_ARRAY_TASK_COUNT", "4")
	if err != nil || c.Part != (experiment.Shard{Index: 1, Count: 4}) {
		t.Errorf("in a Slurm array task: shard %v, %v", c.Part, err)
	}
	for _, bad := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"-n-train", "640"}, nil, "not defined"}, // the old name is gone, not silently ignored
		{[]string{"-shard", "3/3"}, nil, "out of range"},
		{nil, []string{"JOB_COMPLETION_INDEX", "2"}, "SHARD_COUNT"},
		{nil, []string{"SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_COUNT", "x"}, "not an integer"},
		{[]string{"-merge", "-shard", "0/2"}, nil, "-merge trains nothing"},
		{[]string{"extra"}, nil, "unexpected arguments"},
	} {
		if _, err := parse(bad.args, bad.env...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q with %q: error %v, want one containing %q", bad.args, bad.env, err, bad.want)
		}
	}
}
