package experiment_test

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/geluproject/gelu/train/experiment"
)

// A grid split over two workers that share its folder, run here one after
// the other: each trains its half, the first then finds the grid
// unfinished (ErrIncomplete), the last finds every run and returns them
// all, for the report. In a Slurm job array or a Kubernetes Indexed Job
// the shard comes from the environment instead of -shard. The body is the
// package documentation's second sketch.
func Example_shard() {
	dir, _ := os.MkdirTemp("", "shards")
	defer os.RemoveAll(dir)
	for _, args := range [][]string{{"-shard", "0/2"}, {"-shard", "1/2"}} { // the workers' command lines
		f := experiment.Flags{Out: dir, Seed: 1, Seeds: 5, Workers: 1}
		fs := flag.NewFlagSet("prog", flag.ContinueOnError)
		f.Register(fs, experiment.SeedsFlag|experiment.ResumeFlag|experiment.ShardFlags)
		fs.Parse(args)
		grid := experiment.NewGrid(f, []float64{0.05, 0.2}, func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, "loss")
		shard, err := f.ResolveShard(os.Getenv) // -shard, else a Slurm array or Indexed Job, else the whole grid
		if err != nil {
			fmt.Println(err)
			return
		}
		grid.Shard = shard
		grid.Merge = f.Merge
		runs, err := grid.Run(func(r *experiment.Run[float64]) error { return r.Curve.Add(1, r.Setting*float64(r.Seed)) })
		switch {
		case errors.Is(err, experiment.ErrIncomplete): // this worker's share is done
			fmt.Println(args[1], "done:", err)
		case err != nil:
			fmt.Println(err)
			return
		default:
			fmt.Println(args[1], "done:", len(runs), "runs, the report can be made")
		}
	}
	// Output:
	// 0/2 done: shard 0/2 done; 5 of the grid's 10 runs are finished: the shard that finds them all finished, or a run with -merge, makes the report
	// 1/2 done: 10 runs, the report can be made
}
